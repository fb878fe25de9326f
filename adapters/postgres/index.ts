/**
 * The PostgreSQL storage adapter, for several processes on one database: `postgresStorage({ url })`.
 * See docs/postgres.md.
 * @module
 */
export { postgresStorage, type PostgresStats, type PostgresStorage, type PostgresStorageOptions, type SqlQuery } from './postgres-storage.ts';
export { postgresUploadSpool } from './upload-spool.ts';
export type { PoolOptions } from './driver.ts';
export { MIGRATIONS } from './schema.ts';
