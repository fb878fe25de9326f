/**
 * The browser app over HTTP (no browser): sign-in links, sessions, cookies, CSRF, agent tokens and
 * their revocation, live document events, reviews and publication, the request inspector, headers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { listen } from '../../transports/http/listener.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { SCOPES } from '../../src/auth/scopes.ts';
import { manualClock, type Clock } from '../../src/clock.ts';
import { createEngine } from '../../src/engine.ts';
import { StorageConflictError } from '../../src/ports.ts';
import { KnowledgeCollections } from '../../src/knowledge/records.ts';
import { createBrowserApp } from './app.ts';
import { RequestInspector } from './inspector.ts';
import { researcherWithWaitingReview } from './review-kit.ts';
import { addParagraph, createDocument, post, signIn, signInLink, startWebServer, streamText, type Running } from './web-kit.ts';

const start = (options: { clock?: Clock; keepAliveMs?: number } = {}): Promise<Running> => startWebServer({ listen, storage: memoryStorage(), createApiHandler }, options);

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function assertPageHeaders(res: Response): void {
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.is(res.headers.get('x-frame-options'), 'DENY');
  assert.is(res.headers.get('cache-control'), 'no-store');
}

test('signed out, every page answers 401 saying once how to sign in (kw sign-in, or the operator API with $KW_OPERATOR_KEY), with the page headers', async () => {
  const s = await start();
  try {
    for (const path of ['/', '/settings/api', `/documents/sdoc_${'1'.repeat(48)}`, `/reviews/krev_${'1'.repeat(24)}`, '/requests']) {
      const res = await fetch(`${s.url}${path}`);
      assert.is(res.status, 401, path);
      assertPageHeaders(res);
      const html = await res.text();
      // How to sign in, said once: kw sign-in, or the operator API with $KW_OPERATOR_KEY (named once).
      assert.is(html.split('kw sign-in').length - 1, 1, path);
      assert.is(html.split('KW_OPERATOR_KEY').length - 1, 1, path);
      assert.not.match(html, /\$OPERATOR_KEY/, path);
      assert.is(html.split('These pages are for the person who runs this server').length - 1, 1, path);
    }
    const help = await fetch(`${s.url}/sign-in`);
    assert.is(help.status, 200);
    assert.match(await help.text(), /operator\/v1\/sign-in-links/);
  } finally {
    await s.close();
  }
});

test('sign-in links: operator key required, 201 with url and expiresAt (15 minutes), one use, a strict HttpOnly cookie, 303 to /', async () => {
  const clock = manualClock(Date.UTC(2026, 5, 1));
  const s = await start({ clock });
  try {
    const refused = await fetch(`${s.url}/operator/v1/sign-in-links`, { method: 'POST' });
    assert.is(refused.status, 401);
    assert.is(((await refused.json()) as { error: { code: string } }).error.code, 'AUTH_REQUIRED');
    const bad = await signInLink(s, { account: 'not an account!' });
    assert.is(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { fieldErrors: { field: string }[] } }).error.fieldErrors.map((f) => f.field), ['account']);
    assert.is((await signInLink(s, { acount: 'demo' })).status, 400, 'unknown fields are refused');

    const made = await signInLink(s);
    assert.is(made.status, 201);
    const { data, meta } = (await made.json()) as { data: { url: string; expiresAt: string }; meta: { requestId: string } };
    assert.match(data.url, new RegExp(`^${s.url}/sign-in/[A-Za-z0-9_-]{43}$`));
    assert.is(data.expiresAt, new Date(Date.UTC(2026, 5, 1) + 15 * 60_000).toISOString());
    assert.ok(meta.requestId);

    const first = await fetch(data.url, { redirect: 'manual' });
    assert.is(first.status, 303);
    assert.is(first.headers.get('location'), '/');
    const cookie = first.headers.get('set-cookie')!;
    assert.match(cookie, /^kw_session=[A-Za-z0-9_-]{43}; /);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Path=\//);
    assert.not.match(cookie, /Secure/, 'plain http: not Secure');
    const home = await fetch(`${s.url}/`, { headers: { cookie: cookie.split(';')[0]! } });
    assert.is(home.status, 200);
    assertPageHeaders(home);
    assert.match(await home.text(), /<button type="submit">Sign out<\/button>/);

    const again = await fetch(data.url, { redirect: 'manual' });
    assert.is(again.status, 401, 'a link works once');
    assert.is(again.headers.get('set-cookie'), null);

    const late = (await (await signInLink(s)).json()) as { data: { url: string } };
    clock.advance(15 * 60_000);
    assert.is((await fetch(late.data.url, { redirect: 'manual' })).status, 401, 'a link expires after 15 minutes');
  } finally {
    await s.close();
  }
});

test('a session cookie together with a bearer token on the API is 401 AUTH_AMBIGUOUS; Secure cookies over https', async () => {
  const s = await start();
  try {
    const { cookie } = await signIn(s);
    const { token } = await s.engine.credentials.create({ accountId: 'demo', label: 'agent', scopes: ['document:read'] });
    const res = await fetch(`${s.url}/api/v1/auth`, { headers: { cookie, authorization: `Bearer ${token}` } });
    assert.is(res.status, 401);
    assert.is(((await res.json()) as { error: { code: string } }).error.code, 'AUTH_AMBIGUOUS');
    assert.is((await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  } finally {
    await s.close();
  }
  const engine = createEngine({ storage: memoryStorage(), baseUrl: 'https://kw.example' });
  const app = createBrowserApp(engine);
  const handler = app.mount(createApiHandler({ engine }));
  const link = await app.createSignInLink();
  assert.ok(link.url.startsWith('https://kw.example/sign-in/'));
  const res = await handler({ method: 'GET', url: new URL(link.url).pathname, headers: {}, body: null });
  assert.match(res.headers['set-cookie'] ?? '', /; Secure/);
  await engine.close();
});

test("the browser app refuses the operatorKey it once took (the API handler authorises sign-in links now), rather than ignoring it", async () => {
  const engine = createEngine({ storage: memoryStorage() });
  try {
    assert.throws(() => createBrowserApp(engine, { operatorKey: 'k'.repeat(32) } as never), /operatorKey is no longer an option of the browser app[^]*createApiHandler\(\{ engine, operatorKey \}\)/);
  } finally {
    await engine.close();
  }
});

test('/favicon.ico is an icon (200 image/x-icon, a valid ICO header), not a 404', async () => {
  const s = await start();
  try {
    const res = await fetch(`${s.url}/favicon.ico`);
    assert.is(res.status, 200);
    assert.is(res.headers.get('content-type'), 'image/x-icon');
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.equal([...bytes.slice(0, 6)], [0, 0, 1, 0, 1, 0], 'ICONDIR: reserved 0, type 1 (icon), one image');
    const view = new DataView(bytes.buffer);
    assert.is(view.getUint32(18, true) + view.getUint32(14, true), bytes.length, 'the image entry spans the file');
  } finally {
    await s.close();
  }
});

test('every form post without the session CSRF token is 403 and changes nothing; sign out ends the session', async () => {
  const s = await start();
  try {
    const { cookie, csrf } = await signIn(s);
    const fields = { label: 'agent', requestBudget: '100', expiresInDays: '7', scope: ['document:read'] };
    for (const sent of [fields, { ...fields, csrf: 'x'.repeat(43) }]) {
      const res = await post(s, '/settings/api/tokens', cookie, sent);
      assert.is(res.status, 403);
      assertPageHeaders(res);
    }
    assert.is((await s.engine.credentials.listOfAccount('demo')).length, 0, 'no token was created');
    assert.is((await post(s, '/sign-out', cookie, {})).status, 403);
    assert.is((await fetch(`${s.url}/`, { headers: { cookie } })).status, 200, 'still signed in');
    const out = await post(s, '/sign-out', cookie, { csrf });
    assert.is(out.status, 303);
    assert.match(out.headers.get('set-cookie') ?? '', /^kw_session=; .*Max-Age=0/);
    assert.is((await fetch(`${s.url}/`, { headers: { cookie } })).status, 401, 'the session is over');
  } finally {
    await s.close();
  }
});

test('/settings/api: the form with its labels and twelve scopes, a token shown once, usable, listed, then revoked (401 AUTH_REQUIRED)', async () => {
  const s = await start();
  try {
    const { cookie, csrf } = await signIn(s);
    const html = await (await fetch(`${s.url}/settings/api`, { headers: { cookie } })).text();
    for (const label of ['Label', 'Document', 'Request budget', 'Expires in days']) assert.match(html, new RegExp(`<label for="[a-z]+">${label}</label>`), label);
    for (const scope of SCOPES) assert.ok(html.includes(`<input type="checkbox" name="scope" value="${scope}"`), scope);
    assert.match(html, /<button type="submit">Create token<\/button>/);

    const invalid = await post(s, '/settings/api/tokens', cookie, { csrf, label: '', requestBudget: '0', expiresInDays: '91' });
    assert.is(invalid.status, 400);
    const errors = await invalid.text();
    for (const what of ['Label:', 'Request budget:', 'Expires in days:', 'Scopes:']) assert.ok(errors.includes(what), what);

    const made = await post(s, '/settings/api/tokens', cookie, { csrf, label: 'Research agent', document: '', requestBudget: '25', expiresInDays: '3', scope: ['document:read', 'document:create'] });
    // Post/redirect/get: the POST answers 303 to the page, whose first GET shows the token once;
    // reloading it (or typing the form's URL) never lands on a bare 405.
    assert.is(made.status, 303);
    const shown = made.headers.get('location')!;
    assert.match(shown, /^\/settings\/api\?created=[A-Za-z0-9_-]+$/);
    const first = await fetch(`${s.url}${shown}`, { headers: { cookie } });
    assert.is(first.status, 200);
    const page = await first.text();
    const reload = await fetch(`${s.url}${shown}`, { headers: { cookie } });
    assert.is(reload.status, 200);
    const typed = await fetch(`${s.url}/settings/api/tokens`, { headers: { cookie }, redirect: 'manual' });
    assert.is(typed.status, 303);
    assert.is(typed.headers.get('location'), '/settings/api');
    // Another wrong method is a 405 page of the app's own frame, with Allow.
    const wrong = await fetch(`${s.url}/sign-out`, { headers: { cookie } });
    assert.is(wrong.status, 405);
    assert.is(wrong.headers.get('allow'), 'POST');
    assert.match(await wrong.text(), /<title>Method not allowed[^<]*<\/title>[^]*Method not allowed\./);
    const other = await signIn(s);
    assert.not.ok((await (await fetch(`${s.url}${shown}`, { headers: { cookie: other.cookie } })).text()).includes('new-token'), 'another session never sees it');
    const token = /<label for="new-token">New token<\/label><input id="new-token" type="text" readonly value="([^"]+)"/.exec(page)?.[1];
    assert.ok(token, 'the new token is in a read-only input labelled New token');
    const auth = await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(auth.status, 200);
    const principal = ((await auth.json()) as { data: { label: string; scopes: string[]; requestBudget: number; credentialRef: string; displayPrefix: string } }).data;
    assert.equal([principal.label, principal.scopes.sort(), principal.requestBudget], ['Research agent', ['document:create', 'document:read'], 25]);

    const list = await (await fetch(`${s.url}/settings/api`, { headers: { cookie } })).text();
    assert.ok(!list.includes(token!), 'the token is shown only once');
    assert.ok(!(await reload.text()).includes(token!), 'a reload of the page that showed it does not show it again');
    assert.ok(list.includes(principal.displayPrefix));
    assert.match(list, /24 of 25/, 'remaining budget after one request');

    const revoked = await post(s, `/settings/api/tokens/${principal.credentialRef}/revoke`, cookie, { csrf });
    assert.is(revoked.status, 303);
    const after = await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(after.status, 401);
    assert.is(((await after.json()) as { error: { code: string } }).error.code, 'AUTH_REQUIRED');
    assert.match(await (await fetch(`${s.url}/settings/api`, { headers: { cookie } })).text(), /<td(?: data-label="Action")?>Revoked<\/td>/);

    const foreign = await s.engine.credentials.create({ accountId: 'someone-else', label: 'theirs', scopes: ['document:read'] });
    assert.is((await post(s, `/settings/api/tokens/${foreign.credential.credentialRef}/revoke`, cookie, { csrf })).status, 404, "another account's token");
    assert.is((await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${foreign.token}` } })).status, 200);
  } finally {
    await s.close();
  }
});

test('a revocation reaches another engine sharing the storage, whose cache had the credential', async () => {
  const storage = memoryStorage();
  const a = createEngine({ storage });
  const b = createEngine({ storage });
  const { token, credential } = await a.credentials.create({ accountId: 'demo', label: 'shared', scopes: ['document:read'] });
  await b.credentials.authenticate(token); // cached in b
  await a.credentials.revoke('demo', credential.credentialRef);
  await b.credentials.authenticate(token).then(
    () => assert.unreachable('b still accepts the revoked token'),
    (e: { code?: string }) => assert.is(e.code, 'AUTH_REQUIRED'),
  );
  await storage.close();
});

test('/documents/{ref}: rendered from rich-json with version, revision and Markdown; its event stream sends each new version', async () => {
  const s = await start({ keepAliveMs: 50 });
  try {
    const { cookie } = await signIn(s);
    const { token } = await s.engine.credentials.create({ accountId: 'demo', label: 'writer', scopes: ['document:create', 'document:read', 'document:write'] });
    const { documentRef, revision } = await createDocument(s, token);
    const rev2 = await addParagraph(s, token, documentRef, revision, 'First **bold** words with [a link](https://example.org/a) <script>x</script>', 'web-test-mutation-0001');
    const res = await fetch(`${s.url}/documents/${documentRef}`, { headers: { cookie } });
    assert.is(res.status, 200);
    assertPageHeaders(res);
    const html = await res.text();
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<a href="https:\/\/example.org\/a" rel="nofollow noopener">a link<\/a>/);
    assert.ok(!html.includes('<script>x'), 'text is escaped');
    assert.match(html, /Version <span id="doc-version">2<\/span>/);
    assert.ok(html.includes(rev2));
    assert.match(html, /Loss count: <span id="doc-loss">0<\/span>/);
    assert.match(html, new RegExp(`data-live="/documents/${documentRef}/events\\?after=2"`));

    const head = await fetch(`${s.url}/documents/${documentRef}/events`, { method: 'HEAD', headers: { cookie } });
    assert.equal([head.status, await head.text()], [200, ''], 'HEAD answers the headers only');
    assert.is((await fetch(`${s.url}/documents/${documentRef}`, { method: 'HEAD', headers: { cookie } })).status, 200);
    const controller = new AbortController();
    const stream = await fetch(`${s.url}/documents/${documentRef}/events?after=2`, { headers: { cookie }, signal: controller.signal });
    assert.is(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = streamText(stream);
    await events.until('retry:');
    await events.until(': keep-alive');
    await addParagraph(s, token, documentRef, rev2, 'Second paragraph', 'web-test-mutation-0002');
    await events.until('Second paragraph');
    const frame = events.text().slice(events.text().indexOf('id: 3'));
    assert.match(frame, /^id: 3\nevent: version\ndata: \{/);
    const data = JSON.parse(/data: (.*)\n/.exec(frame)![1]!) as { version: number; html: string; markdown: string; lossCount: number };
    assert.is(data.version, 3);
    assert.match(data.html, /<p id="b-[^"]+">Second paragraph<\/p>/);
    assert.match(data.markdown, /Second paragraph/);
    controller.abort();

    const other = await s.engine.credentials.create({ accountId: 'other', label: 'x', scopes: ['document:create'] });
    const theirs = await createDocument(s, other.token);
    assert.is((await fetch(`${s.url}/documents/${theirs.documentRef}`, { headers: { cookie } })).status, 404, "another account's document");
    assert.is((await fetch(`${s.url}/documents/${theirs.documentRef}/events`, { headers: { cookie } })).status, 404);
  } finally {
    await s.close();
  }
});

test('/reviews/{ref}: proposal and report with citations, Accept continues the waiting job; Confirm rights, Release, Promote make /k/ locators resolve', async () => {
  const s = await start();
  try {
    const { cookie, csrf } = await signIn(s);
    const { actor, token, jobId, reviewRef } = await researcherWithWaitingReview(s.engine);
    const before = (await s.engine.jobs.read(actor, jobId)).job;
    assert.equal([before.state, before.phase, before.requiredAction], ['waiting', 'requesting-review', 'review-in-browser']);
    const publicArtifactsOfJob = async () => {
      const res = await fetch(`${s.url}/api/v1/research-jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
      assert.is(res.status, 200);
      return ((await res.json()) as { data: { artifacts: { publicArtifacts: { kind: string; artifactId: string; revision: string; v: number }[] } } }).data.artifacts.publicArtifacts;
    };

    const home = await (await fetch(`${s.url}/`, { headers: { cookie } })).text();
    assert.ok(home.includes(`href="/reviews/${reviewRef}"`), 'the console lists the waiting review');
    assert.ok(home.includes(`data-job="${jobId}"`), 'and the job');
    // Reviews are titled by their question (issue 29 item 8), in the console and on their page.
    const question = (await s.engine.jobs.read(actor, jobId)).job.spec.question;
    assert.ok(home.includes(`<a href="/reviews/${reviewRef}">${escapeText(question)}</a>`), 'the console lists the review by its question');
    assert.not.match(home, />Review krvw_/);
    // The progress column: a bar and a percentage, no developer text; phases in words; times in <time datetime>.
    const row = new RegExp(`<tr data-job="${jobId}">[\\s\\S]*?</tr>`).exec(home)![0];
    assert.match(row, /<td(?: data-label="Progress")? class="progress"><progress max="100" value="\d+" aria-label="[^"]+"><\/progress> <span class="percent">\d+%<\/span><\/td>/);
    assert.match(row, /<td(?: data-label="Phase")? class="phase">Waiting for your review<\/td>/);
    assert.match(home, /<time datetime="\d{4}-\d{2}-\d{2}T[^"]+Z">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/);

    const page = await (await fetch(`${s.url}/reviews/${reviewRef}`, { headers: { cookie } })).text();
    assert.match(page, new RegExp(`<h1>${escapeText(question).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</h1>`), 'the page is titled by the question');
    assert.ok(page.indexOf('>Accept</button>') > page.indexOf('Citations'), 'Accept comes after what is being accepted (the report and its citations)');
    for (const text of ['Yjs', 'Yjs documents merge concurrent edits without a server.', 'https://docs.yjs.dev/', 'Citations', 'https://doi.org/10.1145/2957276.2957310', '>Accept</button>', '>Reject</button>']) {
      assert.ok(page.includes(text), text);
    }
    assert.is((await post(s, `/reviews/${reviewRef}/decision`, cookie, { decision: 'accept' })).status, 403, 'no CSRF token');
    const accepted = await post(s, `/reviews/${reviewRef}/decision`, cookie, { csrf, decision: 'accept' });
    assert.is(accepted.status, 303);
    for await (const e of await s.engine.jobs.follow(actor, jobId)) if (e.kind === 'job.succeeded') break;
    assert.is((await s.engine.jobs.read(actor, jobId)).job.state, 'succeeded', 'the job went on once the person decided');

    const acceptedPage = await (await fetch(`${s.url}/reviews/${reviewRef}`, { headers: { cookie } })).text();
    assert.ok(acceptedPage.includes('>Confirm rights</button>'));
    assert.ok(!acceptedPage.includes('>Promote</button>'), 'Promote comes after Release');
    assert.is((await post(s, `/reviews/${reviewRef}/publication`, cookie, { csrf, step: 'promote' })).status, 409, 'nothing to promote yet');
    for (const step of ['confirm-rights', 'release', 'release']) {
      assert.is((await post(s, `/reviews/${reviewRef}/publication`, cookie, { csrf, step })).status, 303, step);
    }
    assert.equal(await publicArtifactsOfJob(), [], 'released, not yet promoted: nothing public');
    // A promotion that loses a race to another writer (its commit conflicts) is the domain's 409, said in words.
    const storage = s.engine.deps.storage;
    const commit = storage.commit;
    storage.commit = async (ops, ...rest) => {
      if (!ops.some((op) => 'collection' in op && op.collection === KnowledgeCollections.releases)) return commit.call(storage, ops, ...rest);
      storage.commit = commit;
      throw new StorageConflictError('another writer promoted first', 0);
    };
    const raced = await post(s, `/reviews/${reviewRef}/publication`, cookie, { csrf, step: 'promote' });
    storage.commit = commit;
    assert.is(raced.status, 409);
    const racedText = await raced.text();
    assert.match(racedText, /was recorded at the same time/, racedText.slice(0, 2000));
    assert.is((await post(s, `/reviews/${reviewRef}/publication`, cookie, { csrf, step: 'promote' })).status, 303, 'promote');
    const published = await (await fetch(`${s.url}/reviews/${reviewRef}`, { headers: { cookie } })).text();
    const links = [...published.matchAll(/<a href="(\/k\/(entity|inquiry|edition)\/[^"]+)">/g)].map((m) => m[1]!);
    assert.is(links.length, 3, 'one entity, one inquiry and the report edition, released once');
    for (const href of links) {
      const pub = await fetch(`${s.url}${href}`);
      assert.is(pub.status, 200, href);
    }
    // The job (succeeded before publication) lists what was published, over HTTP.
    const listed = await publicArtifactsOfJob();
    assert.equal(listed.map((r) => r.kind), ['entity', 'inquiry', 'edition']);
    for (const r of listed) {
      assert.is(r.v, 1);
      const href = links.find((l) => l.startsWith(`/k/${r.kind}/${r.artifactId}`));
      assert.ok(href, `the review page links ${r.kind} ${r.artifactId}`);
      const pub = await fetch(`${s.url}${href}`);
      assert.is(pub.status, 200, `${href} resolves`);
    }
  } finally {
    await s.close();
  }
});

test('the console follows its unfinished jobs live: /events/jobs sends each change of their state', async () => {
  const s = await start();
  try {
    const { cookie } = await signIn(s);
    const { jobId, reviewRef } = await researcherWithWaitingReview(s.engine);
    assert.match(await (await fetch(`${s.url}/`, { headers: { cookie } })).text(), /data-live="\/events\/jobs"/);
    const controller = new AbortController();
    const res = await fetch(`${s.url}/events/jobs`, { headers: { cookie }, signal: controller.signal });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = streamText(res);
    await events.until('retry:');
    await s.engine.operator.decide(reviewRef, { decision: 'accept', person: 'demo' });
    await events.until('"state":"succeeded"');
    assert.match(events.text(), new RegExp(`event: job\ndata: \\{"jobId":"${jobId}"`));
    controller.abort();
    assert.is((await fetch(`${s.url}/events/jobs`)).status, 401, 'signed out');
  } finally {
    await s.close();
  }
});

test('expired sign-in links and sessions are swept from storage when a link is made', async () => {
  const clock = manualClock(Date.UTC(2026, 5, 1));
  const s = await start({ clock });
  try {
    await signIn(s);
    await signInLink(s);
    const count = async (c: string) => (await s.engine.deps.storage.listRecords(c)).length;
    assert.equal([await count('web-sign-in-links'), await count('web-sessions')], [1, 1]);
    clock.advance(8 * 86_400_000);
    await signInLink(s);
    assert.equal([await count('web-sign-in-links'), await count('web-sessions')], [1, 0], 'only the new link is left');
  } finally {
    await s.close();
  }
});

test('a rejected review fails the waiting job; another account sees 404', async () => {
  const s = await start();
  try {
    const { cookie, csrf } = await signIn(s);
    const { actor, jobId, reviewRef } = await researcherWithWaitingReview(s.engine);
    const stranger = await signIn(s, 'stranger');
    assert.is((await fetch(`${s.url}/reviews/${reviewRef}`, { headers: { cookie: stranger.cookie } })).status, 404);
    assert.is((await post(s, `/reviews/${reviewRef}/decision`, stranger.cookie, { csrf: stranger.csrf, decision: 'accept' })).status, 404);
    assert.is((await post(s, `/reviews/${reviewRef}/decision`, cookie, { csrf, decision: 'reject' })).status, 303);
    for await (const e of await s.engine.jobs.follow(actor, jobId)) if (e.kind === 'job.failed') break;
    const job = (await s.engine.jobs.read(actor, jobId)).job;
    assert.equal([job.state, job.error?.code], ['failed', 'JOB_FAILED']);
  } finally {
    await s.close();
  }
});

test('/requests lists each token\'s requests with status, error code and request id, filterable by token and status', async () => {
  const s = await start();
  try {
    const { cookie } = await signIn(s);
    const one = await s.engine.credentials.create({ accountId: 'demo', label: 'Agent one', scopes: ['document:read'] });
    const two = await s.engine.credentials.create({ accountId: 'demo', label: 'Agent two', scopes: ['document:read'] });
    const missing = await fetch(`${s.url}/api/v1/documents/sdoc_${'9'.repeat(48)}`, { headers: { authorization: `Bearer ${one.token}` } });
    const requestId = ((await missing.json()) as { meta: { requestId: string } }).meta.requestId;
    await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${two.token}` } });
    const all = await (await fetch(`${s.url}/requests`, { headers: { cookie } })).text();
    assert.ok(all.includes(requestId) && all.includes('NOT_FOUND') && all.includes('GET /api/v1/auth'));
    const byToken = await (await fetch(`${s.url}/requests?token=${two.credential.credentialRef}`, { headers: { cookie } })).text();
    assert.ok(!byToken.includes(requestId) && byToken.includes('GET /api/v1/auth'));
    const byStatus = await (await fetch(`${s.url}/requests?status=4xx`, { headers: { cookie } })).text();
    assert.ok(byStatus.includes(requestId) && !byStatus.includes('GET /api/v1/auth'));
    const stranger = await signIn(s, 'stranger');
    assert.ok(!(await (await fetch(`${s.url}/requests`, { headers: { cookie: stranger.cookie } })).text()).includes(requestId), 'only the account\'s tokens');
  } finally {
    await s.close();
  }
});

test('the request inspector keeps at most perToken requests per token and at most `tokens` tokens', () => {
  const inspector = new RequestInspector({ perToken: 3, tokens: 2 });
  const refs = ['a', 'b', 'c'].map((c) => `scred_${c.repeat(24)}`);
  const event = (ref: string, i: number) => ({
    request: { method: 'GET', url: `/api/v1/auth?token=svc_agent_v1_scred_${ref.slice(6)}_secret`, headers: { authorization: `Bearer svc_agent_v1_scred_${ref.slice(6)}_${'s'.repeat(43)}` } },
    response: { status: 200 },
    requestId: `req_${i}`,
    errorCode: null,
    durationMs: 1,
  });
  for (let i = 0; i < 5; i++) inspector.record(event(refs[0]!, i), i);
  inspector.record({ ...event(refs[0]!, 9), request: { method: 'GET', url: '/', headers: {} } }, 9);
  assert.is(inspector.size, 3);
  assert.equal(inspector.list(new Set(refs)).map((r) => r.requestId), ['req_4', 'req_3', 'req_2']);
  assert.is(inspector.list(new Set(refs))[0]!.path, '/api/v1/auth', 'no query values');
  inspector.record(event(refs[1]!, 10), 10);
  inspector.record(event(refs[2]!, 11), 11);
  assert.is(inspector.size, 2, 'the least recent token was dropped');
  assert.equal(inspector.list(new Set(refs)).map((r) => r.credentialRef), [refs[2], refs[1]]);
});

test.run();
