/**
 * The upload spool conformance list: the behaviours of the {@link UploadSpool} port that every
 * spool keeps (memory, file, PostgreSQL), run unchanged against each.
 * @module
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { UploadSpool } from '../../src/library/upload-spool.ts';

/** What `setup` hands each test: an empty spool, and `teardown` (run pass or fail). */
export interface UploadSpoolHarness {
  spool: UploadSpool;
  teardown: () => Promise<void>;
}

const A = 'lupl_aaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'lupl_bbbbbbbbbbbbbbbbbbbbbbbb';
const bytes = (...values: number[]) => new Uint8Array(values);
const text = (s: string) => new TextEncoder().encode(s);

/**
 * Registers the upload spool conformance list as a uvu suite named after `name` and runs it.
 * @param setup creates a fresh, empty spool for each test.
 */
export function uploadSpoolConformance(name: string, setup: () => Promise<UploadSpoolHarness>): void {
  const test = suite(`upload spool conformance: ${name}`);
  const it = (title: string, body: (spool: UploadSpool) => Promise<void>) =>
    test(title, async () => {
      const { spool, teardown } = await setup();
      try {
        await body(spool);
      } finally {
        await teardown();
      }
    });

  it('an empty spool lists nothing and reads null for an unknown id; removing an unknown id is no error', async (spool) => {
    assert.equal(await spool.list(), []);
    assert.is(await spool.read(A), null);
    assert.is(await spool.read(A, 10), null);
    await spool.remove(A);
    assert.equal(await spool.list(), []);
  });

  it('a created id holds empty bytes and is listed', async (spool) => {
    await spool.create(A);
    assert.equal(await spool.read(A), new Uint8Array(0));
    assert.equal(await spool.read(A, 0), new Uint8Array(0));
    assert.equal(await spool.list(), [A]);
  });

  it('appends join in order; maxBytes gives the first bytes, across chunk boundaries', async (spool) => {
    await spool.create(A);
    await spool.append(A, text('hello, '));
    await spool.append(A, text('wor'));
    await spool.append(A, new Uint8Array(0));
    await spool.append(A, text('ld'));
    assert.equal(new TextDecoder().decode((await spool.read(A))!), 'hello, world');
    assert.equal(new TextDecoder().decode((await spool.read(A, 9))!), 'hello, wo');
    assert.equal(new TextDecoder().decode((await spool.read(A, 7))!), 'hello, ');
    assert.equal(new TextDecoder().decode((await spool.read(A, 1))!), 'h');
    assert.equal(await spool.read(A, 0), new Uint8Array(0));
    assert.equal(new TextDecoder().decode((await spool.read(A, 1000))!), 'hello, world');
  });

  it('create drops the earlier bytes of an id; append to an id never created creates it', async (spool) => {
    await spool.create(A);
    await spool.append(A, bytes(1, 2, 3));
    await spool.create(A);
    assert.equal(await spool.read(A), new Uint8Array(0));
    await spool.append(A, bytes(4));
    assert.equal(await spool.read(A), bytes(4));
    await spool.append(B, bytes(9, 8));
    assert.equal(await spool.read(B), bytes(9, 8));
    assert.equal((await spool.list()).sort(), [A, B]);
  });

  it('remove drops one id only: it reads null and leaves the list', async (spool) => {
    await spool.create(A);
    await spool.append(A, bytes(1));
    await spool.create(B);
    await spool.append(B, bytes(2));
    await spool.remove(A);
    assert.is(await spool.read(A), null);
    assert.equal(await spool.list(), [B]);
    assert.equal(await spool.read(B), bytes(2));
    await spool.remove(A);
    await spool.create(A);
    assert.equal(await spool.read(A), new Uint8Array(0), 'an id removed and created again starts empty');
  });

  it('the spool keeps no reference to an appended chunk, and every byte value survives', async (spool) => {
    const chunk = Uint8Array.from({ length: 256 }, (_, i) => i);
    await spool.create(A);
    await spool.append(A, chunk.subarray(0, 128));
    await spool.append(A, chunk.subarray(128));
    const expected = chunk.slice();
    chunk.fill(0);
    assert.equal(await spool.read(A), expected);
  });

  it('a large upload in many chunks reads back whole and as a prefix', async (spool) => {
    const size = 1024 * 1024 + 17;
    const whole = Uint8Array.from({ length: size }, (_, i) => (i * 31 + (i >> 8)) & 0xff);
    await spool.create(A);
    for (let at = 0; at < size; at += 64 * 1024) await spool.append(A, whole.subarray(at, Math.min(size, at + 64 * 1024)));
    const read = (await spool.read(A))!;
    assert.is(read.byteLength, size);
    assert.ok(read.every((b, i) => b === whole[i]), 'the bytes read back are the bytes appended');
    assert.equal(await spool.read(A, 4100), whole.slice(0, 4100));
  });

  test.run();
}
