/**
 * The contract's size limits of requests and responses, in one place for the domain, the edge and
 * the transports.
 * @module
 */

/** Request body limit: 256 KB. A larger body is INVALID_REQUEST. */
export const MAX_REQUEST_BODY = 256 * 1024;
/** Response body limit: 2 MB. A larger canonical document or report is unreadable through the API. */
export const MAX_RESPONSE_BODY = 2 * 1024 * 1024;
/** Upload body limit (library file uploads, `PUT /api/v1/library/uploads/{uploadId}`): 20 MiB. */
export const MAX_UPLOAD_BODY = 20 * 1024 * 1024;
