/**
 * The link library domain: commands, capture ports and the service. Re-exports only.
 * @module
 */
export { createLibraryService, requiredScope, type LibraryOptions, type LibraryResult, type LibraryService } from './service.ts';
export { LibraryCommandSchema, LIBRARY_COMMAND_TYPES, type LibraryCommand, type LibraryCommandType, type Selection } from './schemas.ts';
export { CaptureFailure, isCaptureFailure, type CaptureFailureCode, type DetectedContent, type ExtractedText, type Extractor, type FetchedPage, type FetchOptions, type Fetcher } from './capture-port.ts';
export { checkAddress, isIpLiteral, type AddressVerdict } from './address-policy.ts';
export { selectPassage } from './selection.ts';
export { CaptureState, type CaptureReason, type LibraryItem } from './records.ts';
export type { ReaderBlock, ReaderPage } from './reader-page.ts';
export type { PendingUpload, PreparedUpload, ReceivedUpload } from './uploads.ts';
export { memoryUploadSpool, type UploadSpool } from './upload-spool.ts';
export type { SweepReport } from './upload-upkeep.ts';
