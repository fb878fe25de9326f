/**
 * What the storage conformance suite asks of an adapter's test setup.
 * @module
 */
import type { Storage } from '../../src/ports.ts';

/**
 * What `setup` hands each test.
 * @remarks
 * - `storage` must be empty.
 * - `reopen`, for persistent adapters, opens the same data again; tests call it only after they
 *   closed `storage`.
 * - `teardown` runs after every test, pass or fail. It must release everything setup created,
 *   including storages returned by `reopen`, and must tolerate storages the test already closed.
 */
export interface StorageHarness {
  storage: Storage;
  reopen?: () => Promise<Storage>;
  teardown: () => Promise<void>;
}

/** Creates a fresh, empty {@link StorageHarness}; called once per test. */
export type StorageSetup = () => Promise<StorageHarness>;

/** Registers one conformance test: `body` runs with a fresh harness that is torn down afterwards. */
export type RegisterTest = (title: string, body: (harness: StorageHarness) => Promise<void>) => void;
