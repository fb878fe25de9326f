/**
 * The embedded default storage: `lowdbStorage({ dir })`.
 * @module
 */
export { lowdbStorage, MIN_JOURNAL_BYTES } from './lowdb-storage.ts';
export type { LowdbStats, LowdbStorage, LowdbStorageOptions } from './lowdb-storage.ts';
export { JournalCorruptError, JournalDataLossError } from './journal-file.ts';
export type { RecoveryReport } from './recovery.ts';
export { fileUploadSpool, type FileUploadSpoolOptions } from './upload-spool.ts';
