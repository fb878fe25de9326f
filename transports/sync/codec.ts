/**
 * The y-websocket wire format (lib0's variable-length encoding), written directly:
 * `[messageType: varUint, …]` with
 * - sync (0): `[0, 0, varUint8Array(stateVector)]` step 1, `[0, 1, varUint8Array(update)]` step 2,
 *   `[0, 2, varUint8Array(update)]` update;
 * - awareness (1): `[1, varUint8Array(awarenessUpdate)]`; query awareness (3): `[3]`.
 * @module
 */

/** y-websocket's message types. */
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;

/** y-protocols' sync message types. */
export const SYNC_STEP1 = 0;
export const SYNC_STEP2 = 1;
export const SYNC_UPDATE = 2;

/** The varUint encoding of `n` (lib0's). */
export function varUintBytes(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push(0x80 | (n & 0x7f));
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** A message of `head` varUints followed by one length-prefixed byte array (when given). */
export function encodeMessage(head: readonly number[], payload?: Uint8Array): Uint8Array {
  const prefix = head.flatMap(varUintBytes);
  if (payload === undefined) return Uint8Array.from(prefix);
  const length = varUintBytes(payload.byteLength);
  const out = new Uint8Array(prefix.length + length.length + payload.byteLength);
  out.set(prefix, 0);
  out.set(length, prefix.length);
  out.set(payload, prefix.length + length.length);
  return out;
}

/** Reads a message front to back; throws a RangeError past its end. */
export class MessageReader {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  /** Bytes read so far. */
  get offset(): number {
    return this.at;
  }

  /** One varUint (at most 53 bits). */
  varUint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.at >= this.bytes.length) throw new RangeError('message ends inside a number');
      const b = this.bytes[this.at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
    }
    throw new RangeError('number too long');
  }

  /** One length-prefixed byte array (a view, not a copy). */
  varUint8Array(): Uint8Array {
    const length = this.varUint();
    if (this.at + length > this.bytes.length) throw new RangeError('message ends inside a byte array');
    const out = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }
}
