import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { isoTimestamp, manualClock, type ManualClock } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import { isServiceError } from '../errors.ts';
import { sha256Hex } from '../hash.ts';
import { Patterns, randomIds, refMinter } from '../ids.ts';
import type { Storage } from '../ports.ts';
import { createActivation } from './activation.ts';
import { createBudgetLedger } from './budgets.ts';
import { CREDENTIAL_COLLECTION, createCredentialService, type CredentialRecord } from './credentials.ts';
import { constantTimeEqual, credentialRefOfToken, displayPrefix, randomSecret } from './tokens.ts';
import { linksAt } from '../contract/links.ts';

const DAY = 86_400_000;

function deps(storage: Storage = memoryStorage(), clock: ManualClock = manualClock()): EngineDeps & { clock: ManualClock } {
  return { storage, clock, ids: randomIds, refs: refMinter(randomIds), sha256: sha256Hex, links: linksAt('http://example.test'), reportError: (e) => { throw e; } };
}

async function rejects(p: Promise<unknown>, code: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (e) {
    assert.ok(isServiceError(e), `expected a ServiceError, got ${String(e)}`);
    assert.is((e as { code: string }).code, code);
    return e as unknown as Record<string, unknown>;
  }
  assert.unreachable(`expected ${code}, but it resolved`);
  throw new Error('unreachable');
}

function throwsCode(fn: () => unknown, code: string): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    assert.ok(isServiceError(e));
    assert.is((e as { code: string }).code, code);
    return e as unknown as Record<string, unknown>;
  }
  assert.unreachable(`expected ${code}`);
  throw new Error('unreachable');
}

test('token format: svc_agent_v1_scred_<24 hex>_<43 base64url>, shown once, only its SHA-256 stored', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: DAY });
  const { token, credential } = await svc.create({ label: 'agent', scopes: ['document:read'] });
  assert.match(token, /^svc_agent_v1_scred_[a-f0-9]{24}_[A-Za-z0-9_-]{43}$/);
  assert.match(credential.credentialRef, Patterns.credentialRef);
  assert.is(credentialRefOfToken(token), credential.credentialRef);
  assert.is(token.slice(19, 43), credential.credentialRef.slice(6));
  const stored = await d.storage.getRecord<CredentialRecord>(CREDENTIAL_COLLECTION, credential.credentialRef);
  assert.ok(stored);
  assert.is(stored.value.tokenSha256, sha256Hex(token));
  assert.not.ok(JSON.stringify(stored.value).includes(token.slice(44)), 'the secret is not stored');
});

test('displayPrefix is exactly 28 characters ending in U+2026', () => {
  const p = displayPrefix('scred_1a2b3c4d5e6f7a8b9c0d1e2f');
  assert.is(p, 'svc_agent_v1_scred_1a2b3c4d\u2026');
  assert.is(p.length, 28);
  assert.match(p, Patterns.displayPrefix);
});

test('random secrets are 43 base64url chars and differ', () => {
  const a = randomSecret();
  const b = randomSecret();
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  assert.is.not(a, b);
});

test('constantTimeEqual compares whole strings', () => {
  assert.ok(constantTimeEqual('abc', 'abc'));
  assert.not.ok(constantTimeEqual('abc', 'abd'));
  assert.not.ok(constantTimeEqual('abc', 'abcd'));
  assert.not.ok(constantTimeEqual('', 'a'));
});

test('authenticate: valid token → credential; malformed, unknown, wrong secret, expired → AUTH_REQUIRED', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: DAY });
  const { token, credential } = await svc.create({ label: 'x', scopes: ['document:read'], expiresInDays: 1 });
  const got = await svc.authenticate(token);
  assert.is(got.credentialRef, credential.credentialRef);
  assert.equal(got.actor, { accountId: 'owner', credentialRef: credential.credentialRef, documentRef: null });
  const e = await rejects(svc.authenticate('nonsense'), 'AUTH_REQUIRED');
  assert.is(e.requiredAction, 'authenticate');
  await rejects(svc.authenticate(`svc_agent_v1_scred_${'0'.repeat(24)}_${'A'.repeat(43)}`), 'AUTH_REQUIRED');
  const wrong = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
  await rejects(svc.authenticate(wrong), 'AUTH_REQUIRED');
  d.clock.advance(DAY - 1);
  await svc.authenticate(token);
  d.clock.advance(1);
  await rejects(svc.authenticate(token), 'AUTH_REQUIRED');
});

test('authentication is served from memory after the first lookup', async () => {
  const storage = memoryStorage();
  let reads = 0;
  const counting: Storage = {
    ...storage,
    getRecord: (c, k) => {
      reads++;
      return storage.getRecord(c, k);
    },
    commit: (ops) => storage.commit(ops),
  };
  const created = await createCredentialService(deps(storage), { budgetWindowMs: DAY }).create({ label: 'x', scopes: ['document:read'] });
  const svc = createCredentialService(deps(counting), { budgetWindowMs: DAY });
  await svc.authenticate(created.token);
  const after = reads;
  for (let i = 0; i < 20; i++) await svc.authenticate(created.token);
  assert.is(reads, after);
});

test('a verified token is hashed once; revocation, here or by another service on the storage, still rejects it', async () => {
  const storage = memoryStorage();
  let hashes = 0;
  const counting = { ...deps(storage), sha256: ((data) => (hashes++, sha256Hex(data))) as typeof sha256Hex };
  const svc = createCredentialService(counting, { budgetWindowMs: DAY });
  const other = createCredentialService(deps(storage), { budgetWindowMs: DAY });
  const a = await svc.create({ label: 'a', scopes: ['document:read'] });
  const b = await svc.create({ label: 'b', scopes: ['document:read'] });
  await svc.authenticate(a.token);
  const after = hashes;
  for (let i = 0; i < 20; i++) await svc.authenticate(a.token);
  assert.is(hashes, after);
  const wrong = a.token.slice(0, -1) + (a.token.endsWith('A') ? 'B' : 'A');
  await rejects(svc.authenticate(wrong), 'AUTH_REQUIRED');
  await svc.revoke('owner', a.credential.credentialRef);
  const e = await rejects(svc.authenticate(a.token), 'AUTH_REQUIRED');
  assert.match(String(e.message), /revoked/);
  await svc.authenticate(b.token);
  await other.revoke('owner', b.credential.credentialRef);
  await rejects(svc.authenticate(b.token), 'AUTH_REQUIRED');
});

test('create validates label, scopes, budget, expiry, account and documentRef', async () => {
  const svc = createCredentialService(deps(), { budgetWindowMs: DAY });
  const e = await rejects(
    svc.create({ label: '', scopes: ['nope'], requestBudget: 0, expiresInDays: 91, accountId: '-bad', documentRef: 'sdoc_x' }),
    'INVALID_REQUEST',
  );
  const fields = (e.fieldErrors as { field: string }[]).map((f) => f.field).sort();
  assert.equal(fields, ['account', 'documentRef', 'expiresInDays', 'label', 'requestBudget', 'scopes.0']);
  await rejects(svc.create({ label: 'x'.repeat(81), scopes: ['document:read'] }), 'INVALID_REQUEST');
  await svc.create({ label: 'x'.repeat(80), scopes: ['document:read'], requestBudget: 10_000, expiresInDays: 90 });
  await rejects(svc.create({ label: 'x', scopes: ['document:read'], requestBudget: 10_001 }), 'INVALID_REQUEST');
  await rejects(svc.create({ label: 'x', scopes: [] }), 'INVALID_REQUEST');
});

test('defaults: budget 10000, 90 days, account owner', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: DAY });
  const { credential } = await svc.create({ label: 'x', scopes: ['document:read', 'document:read'] });
  assert.is(credential.requestBudget, 10_000);
  assert.is(credential.expiresAt - credential.createdAt, 90 * DAY);
  assert.is(credential.accountId, 'owner');
  assert.equal(credential.scopes, ['document:read']);
});

test('a document-bound credential needs an existing document of the account; it takes its space', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: DAY });
  const ref = d.refs.documentRef();
  const space = d.refs.spaceRef();
  await rejects(svc.create({ label: 'x', scopes: ['document:read'], documentRef: ref }), 'NOT_FOUND');
  await d.storage.commit([
    {
      kind: 'document.create',
      head: {
        documentRef: ref,
        spaceRef: space,
        accountId: 'acme',
        title: 't',
        version: 1,
        snapshotVersion: 1,
        generation: 0,
        contentSha256: 'a'.repeat(64),
        blockCount: 0,
        createdAt: 0,
        updatedAt: 0,
      },
      snapshot: new Uint8Array([0]),
    },
  ]);
  await rejects(svc.create({ label: 'x', scopes: ['document:read'], documentRef: ref, accountId: 'other' }), 'NOT_FOUND');
  const { credential } = await svc.create({ label: 'x', scopes: ['document:read'], documentRef: ref });
  assert.is(credential.accountId, 'acme');
  assert.is(credential.spaceRef, space);
  const p = svc.principal(credential);
  assert.is(p.documentRef, ref);
  assert.is(p.spaceRef, space);
  assert.is(p.browserHref, `http://example.test/documents/${ref}`);
});

test('principal: fields of the contract, expiresAt ISO with ms, no documentRef for account-wide', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: DAY });
  const { credential } = await svc.create({ label: 'lbl', scopes: ['document:read'], requestBudget: 5 });
  const status = svc.charge(credential);
  const p = svc.principal(credential, status);
  assert.is(p.v, 1);
  assert.is(p.credentialRef, credential.credentialRef);
  assert.is(p.displayPrefix.length, 28);
  assert.is(p.label, 'lbl');
  assert.equal(p.scopes, ['document:read']);
  assert.is(p.requestBudget, 5);
  assert.is(p.remainingBudget, 4);
  assert.is(p.expiresAt, isoTimestamp(credential.expiresAt));
  assert.not.ok('documentRef' in p);
  assert.not.ok('spaceRef' in p);
  assert.is(p.budgets?.request.resetsAt, isoTimestamp(credential.createdAt + DAY));
});

test('budget: counts per window from creation, RATE_LIMITED with the time to the window end, then resets', async () => {
  const d = deps();
  const svc = createCredentialService(d, { budgetWindowMs: 60_000 });
  const { credential } = await svc.create({ label: 'x', scopes: ['document:read'], requestBudget: 3 });
  assert.is(svc.charge(credential).remaining, 2);
  assert.is(svc.charge(credential).remaining, 1);
  d.clock.advance(10_000);
  assert.is(svc.charge(credential).remaining, 0);
  const e = throwsCode(() => svc.charge(credential), 'RATE_LIMITED');
  assert.is(e.retryAfterMs, 50_000);
  assert.is(e.retryable, true);
  assert.is(svc.budget(credential).remaining, 0);
  d.clock.advance(49_999);
  throwsCode(() => svc.charge(credential), 'RATE_LIMITED');
  d.clock.advance(1);
  assert.is(svc.charge(credential).remaining, 2);
  await svc.flush();
});

test('budget survives a restart through the persisted counter (flush), and not across windows', async () => {
  const storage = memoryStorage();
  const clock = manualClock();
  const first = createCredentialService(deps(storage, clock), { budgetWindowMs: 60_000 });
  const { token, credential } = await first.create({ label: 'x', scopes: ['document:read'], requestBudget: 3 });
  first.charge(credential);
  first.charge(credential);
  await first.flush();
  const second = createCredentialService(deps(storage, clock), { budgetWindowMs: 60_000 });
  const again = await second.authenticate(token);
  assert.is(second.budget(again).remaining, 1);
  second.charge(again);
  throwsCode(() => second.charge(again), 'RATE_LIMITED');
  await second.flush();
  clock.advance(60_000);
  const third = createCredentialService(deps(storage, clock), { budgetWindowMs: 60_000 });
  assert.is(third.budget(await third.authenticate(token)).remaining, 3);
});

test('budget counters are persisted in the background without a write per charge', async () => {
  const storage = memoryStorage();
  let commits = 0;
  const counting: Storage = { ...storage, getRecord: (c, k) => storage.getRecord(c, k), commit: (ops) => (commits++, storage.commit(ops)) };
  const clock = manualClock();
  const ledger = createBudgetLedger(counting, clock, 60_000, 20);
  const c = { credentialRef: 'scred_000000000000000000000001', createdAt: clock.now(), requestBudget: 100 };
  await ledger.load(c);
  for (let i = 0; i < 50; i++) ledger.charge(c);
  assert.is(commits, 0, 'no write on the hot path');
  await new Promise((r) => setTimeout(r, 60));
  assert.is(commits, 1, 'one background write for 50 charges');
  const stored = await storage.getRecord<{ used: number }>('credential-budgets', c.credentialRef);
  assert.is(stored?.value.used, 50);
  await ledger.flush();
  assert.is(commits, 1, 'flush with nothing dirty writes nothing');
});

test('activation: defaults, set returns the whole state, persisted across instances', async () => {
  const storage = memoryStorage();
  const a = createActivation(deps(storage));
  assert.equal(await a.get(), { search: false, reviews: false, proposals: true });
  assert.equal(await a.set({ search: true }), { search: true, reviews: false, proposals: true });
  assert.equal(await a.set({ proposals: false }), { search: true, reviews: false, proposals: false });
  const b = createActivation(deps(storage));
  assert.equal(await b.get(), { search: true, reviews: false, proposals: false });
  const state = await b.get();
  state.search = false;
  assert.is((await b.get()).search, true, 'get returns a copy');
});

test.run();
