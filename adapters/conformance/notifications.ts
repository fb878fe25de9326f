/**
 * Conformance tests: payload-free change notification (`subscribe`, `recordTopic`, `streamTopic`).
 * @remarks Adapters may notify asynchronously (another process, a database's NOTIFY), so the tests
 * wait with {@link eventually} instead of expecting a call before `commit` resolves.
 * @module
 */
import * as assert from 'uvu/assert';
import { documentTopic, recordTopic, streamTopic } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { append, compact, create, del, eventually, put, putIndexed, rejectsWithConflict, streamAppend } from './fixtures.ts';

/** Lets pending notifications of an asynchronous adapter arrive before asserting that none did. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Registers the tests of change notification. */
export function notificationTests(it: RegisterTest): void {
  it('a listener is called once per committed batch that touches its topic, and the change is readable then', async ({ storage }) => {
    // Each call's read must finish before the next commit: an asynchronous adapter (a pool of
    // connections) may otherwise run the read after a later batch (seen with PostgreSQL).
    let calls = 0;
    const read: unknown[] = [];
    storage.subscribe(recordTopic('jobs', 'j1'), () => {
      calls++;
      void storage.getRecord('jobs', 'j1').then((r) => read.push(r?.value));
    });
    await storage.commit([put('jobs', 'j1', 1), put('jobs', 'j1', 2)]);
    await eventually(() => read.length === 1, 'one call for a batch with two puts of the key');
    await storage.commit([putIndexed('jobs', 'j1', 3, 'p', '1'), put('jobs', 'other', 0), put('other', 'j1', 0)]);
    await eventually(() => read.length === 2, 'a second call');
    await storage.commit([put('jobs', 'other', 1), put('other', 'j1', 1), streamAppend('j1', 1, 'x'), create('j1')]);
    await storage.commit([del('jobs', 'j1')]);
    await eventually(() => read.length === 3, 'a call for the delete');
    await quiet();
    assert.is(calls, 3, 'other keys, collections, streams and documents do not call it');
    assert.equal(read, [2, 3, undefined], 'each call could read its batch');
  });

  it('stream listeners are called in commit order, once per appending batch', async ({ storage }) => {
    const heads: number[] = [];
    let calls = 0;
    storage.subscribe(streamTopic('events'), () => {
      calls++;
      void storage.streamHead('events').then((h) => heads.push(h));
    });
    await storage.commit([streamAppend('events', 1, 'a'), streamAppend('events', 2, 'b')]);
    // Each call's head read must finish before the next commit: an asynchronous adapter (a database's
    // NOTIFY) may otherwise read a later head than the batch that called it (seen on Node 24).
    await eventually(() => heads.length === 1, 'a call for the first batch');
    for (let seq = 3; seq <= 6; seq++) {
      await storage.commit([streamAppend('events', seq, seq)]);
      await eventually(() => heads.length === seq - 1, `a call for the batch ${seq}`);
    }
    await storage.commit([streamAppend('other', 1, 'x'), put('c', 'events', 1)]);
    await eventually(() => heads.length === 5, 'five calls');
    await quiet();
    assert.is(calls, 5);
    assert.equal(heads, [2, 3, 4, 5, 6]);
  });

  it('a document listener is called for its creation, each append and a compaction, never for another document', async ({ storage }) => {
    const versions: Promise<number | undefined>[] = [];
    storage.subscribe(documentTopic('d1'), () => {
      versions.push(storage.getDocumentHead('d1').then((h) => h?.version));
    });
    await storage.commit([create('d1')]);
    await eventually(() => versions.length === 1, 'a call for the creation');
    await storage.commit([append('d1', 2), put('c', 'd1', 1)]);
    await eventually(() => versions.length === 2, 'a call for the append');
    await storage.commit([create('d2'), append('d2', 2), streamAppend('d1', 1, 'x')]);
    await storage.commit([compact('d1', 2)]);
    await eventually(() => versions.length === 3, 'a call for the compaction');
    await rejectsWithConflict(storage.commit([append('d1', 9)]), 0);
    await quiet();
    assert.is(versions.length, 3, 'other documents, records, streams and rejected batches do not call it');
    assert.equal(await Promise.all(versions), [1, 2, 2], 'each call could read its batch');
  });

  it('a rejected batch notifies nobody', async ({ storage }) => {
    await storage.commit([create('d'), streamAppend('s', 1, 'a')]);
    let calls = 0;
    storage.subscribe(recordTopic('c', 'k'), () => calls++);
    storage.subscribe(streamTopic('s'), () => calls++);
    await rejectsWithConflict(storage.commit([put('c', 'k', 1), streamAppend('s', 2, 'b'), append('d', 5)]), 2);
    await rejectsWithConflict(storage.commit([streamAppend('s', 1, 'again')]), 0);
    await quiet();
    assert.is(calls, 0);
  });

  it('unsubscribe stops the calls, and a throwing listener neither breaks the commit nor the other listeners', async ({ storage }) => {
    const topic = recordTopic('c', 'k');
    let a = 0;
    let b = 0;
    const offA = storage.subscribe(topic, () => {
      a++;
      throw new Error('listener failure (expected by the test)');
    });
    const offB = storage.subscribe(topic, () => b++);
    await storage.commit([put('c', 'k', 1)]);
    await eventually(() => a === 1 && b === 1, 'both listeners called');
    offA();
    offA();
    await storage.commit([put('c', 'k', 2)]);
    await eventually(() => b === 2, 'the remaining listener called');
    offB();
    await storage.commit([put('c', 'k', 3)]);
    await quiet();
    assert.equal([a, b], [1, 2]);
    assert.is((await storage.getRecord('c', 'k'))?.revision, 3);
  });
}
