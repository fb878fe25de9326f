/**
 * The y-websocket wire format, in lib0's variable-length encoding (lib0/encoding, lib0/decoding):
 * `[messageType: varUint, …]` with
 * - sync (0): `[0, 0, varUint8Array(stateVector)]` step 1, `[0, 1, varUint8Array(update)]` step 2,
 *   `[0, 2, varUint8Array(update)]` update;
 * - awareness (1): `[1, varUint8Array(awarenessUpdate)]`; query awareness (3): `[3]`.
 * @module
 */

import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';

/** y-websocket's message types. */
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;

/** y-protocols' sync message types. */
export const SYNC_STEP1 = 0;
export const SYNC_STEP2 = 1;
export const SYNC_UPDATE = 2;

/** A message of `head` varUints followed by one length-prefixed byte array (when given), encoded by lib0. */
export function encodeMessage(head: readonly number[], payload?: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  for (const n of head) encoding.writeVarUint(encoder, n);
  if (payload !== undefined) encoding.writeVarUint8Array(encoder, payload);
  return encoding.toUint8Array(encoder);
}

/**
 * Reads a message front to back with lib0's decoder; throws past its end.
 * @remarks A length-prefixed array must lie inside the message: lib0 alone would hand out a view
 * that runs on into the bytes after it (a subarray of a larger buffer), so the length is checked
 * here first. A varUint that does not fit in 53 bits, or that the message ends inside, throws.
 */
export class MessageReader {
  private readonly decoder: decoding.Decoder;
  constructor(private readonly bytes: Uint8Array) {
    this.decoder = decoding.createDecoder(bytes);
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.decoder.pos;
  }

  /** One varUint (at most 53 bits). */
  varUint(): number {
    return decoding.readVarUint(this.decoder);
  }

  /** One length-prefixed byte array (a view, not a copy). */
  varUint8Array(): Uint8Array {
    const length = decoding.readVarUint(this.decoder);
    if (this.decoder.pos + length > this.bytes.length) throw new RangeError('message ends inside a byte array');
    return decoding.readUint8Array(this.decoder, length);
  }
}
