/**
 * Engine warnings on Node 20 (issue 29 item 4): every package of the lockfile whose `engines.node`
 * excludes the Node running the tests (20 here) is a dev dependency named in docs/dev-server.md's
 * "Node versions"; a runtime dependency never is. So the doc's account of `npm ci`'s EBADENGINE
 * warnings stays true when the lockfile changes.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');

/** Whether `version` ([major, minor, patch]) satisfies a simple `engines.node` range; undefined for a form this check does not know. */
export function satisfies(range: string, version: [number, number, number]): boolean | undefined {
  const compare = (want: number[]) => {
    for (let i = 0; i < 3; i++) if (version[i]! !== want[i]!) return version[i]! - want[i]!;
    return 0;
  };
  let known = true;
  const ok = range.split('||').some((part) => {
    // An alternative: comparators separated by spaces, all of which must hold.
    const comparators = part.trim().replace(/(>=|<=|>|<)\s+/g, '$1').split(/\s+/);
    return comparators.every((c) => {
      if (c === '*' || c === '' || c === 'x') return true;
      const m = /^(>=|<=|>|<)?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(c);
      if (!m) {
        known = false;
        return false;
      }
      const want = [Number(m[2]), Number(m[3]) || 0, Number(m[4]) || 0];
      const order = compare(want);
      switch (m[1]) {
        case '>=': return order >= 0;
        case '>': return order > 0;
        case '<=': return order <= 0;
        case '<': return order < 0;
        default: return version[0] === want[0] && (m[3] === undefined || !/^\d+$/.test(m[3]) || version[1] === want[1]);
      }
    });
  });
  return ok ? true : known ? false : undefined;
}

test('the simple range check knows the forms of the lockfile', () => {
  assert.is(satisfies('>=22', [20, 20, 2]), false);
  assert.is(satisfies('>= 18.0.0', [20, 20, 2]), true);
  assert.is(satisfies('>=20.19.0', [20, 18, 0]), false);
  assert.is(satisfies('18 || 20 || >=22', [20, 1, 0]), true);
  assert.is(satisfies('10.* || >= 12.*', [20, 1, 0]), true);
  assert.is(satisfies('>=22.12.0 || >=20.19.0 <21.0.0', [20, 20, 2]), true);
  assert.is(satisfies('>=22.12.0 || >=20.19.0 <21.0.0', [20, 18, 0]), false);
  assert.is(satisfies('^20.1', [20, 1, 0]), undefined);
});

test('every package whose engines exclude this Node is a dev dependency named in docs/dev-server.md', async () => {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } }> };
  const doc = await readFile(join(root, 'docs', 'dev-server.md'), 'utf8');
  const nodeVersions = /## Node versions\n([\s\S]*?)(?=\n## |$)/.exec(doc)![1]!;
  const version = process.versions.node.split('.').map(Number) as [number, number, number];
  for (const [path, pkg] of Object.entries(lock.packages)) {
    const range = typeof pkg.engines === 'object' ? pkg.engines?.node : undefined;
    if (!path || range === undefined) continue;
    const ok = satisfies(range, version);
    assert.ok(ok !== undefined, `${path}: engines.node "${range}" is a form this check does not know`);
    if (ok) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    assert.ok(pkg.dev, `${name}@${pkg.version} is a runtime dependency that declares node ${range}: installing the package on Node ${version[0]} warns`);
    assert.ok(nodeVersions.includes(`${name}@${pkg.version}`), `${name}@${pkg.version} declares node ${range}: docs/dev-server.md must say npm ci warns about it`);
  }
});

test.run();
