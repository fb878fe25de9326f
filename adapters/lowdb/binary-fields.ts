/**
 * Little-endian binary fields for the journal: a writer into one preallocated buffer and a reader
 * with bounds checks.
 * @module
 */

/** Bytes a string can take as UTF-8 at most: 3 per UTF-16 code unit. */
export function maxUtf8Bytes(text: string): number {
  return text.length * 3;
}

/**
 * Writes fields into a buffer sized in advance by the caller (an upper bound is fine:
 * {@link bytes} returns the part written).
 */
export class BinaryWriter {
  private at: number;

  constructor(
    private readonly buffer: Buffer,
    start = 0,
  ) {
    this.at = start;
  }

  /** Bytes written so far (including the start offset). */
  get offset(): number {
    return this.at;
  }

  u8(value: number): void {
    this.buffer[this.at++] = value;
  }

  u32(value: number): void {
    this.buffer.writeUInt32LE(value, this.at);
    this.at += 4;
  }

  f64(value: number): void {
    this.buffer.writeDoubleLE(value, this.at);
    this.at += 8;
  }

  /** A UTF-8 string after its byte length (u32). Needs {@link maxUtf8Bytes} + 4 bytes of room. */
  str(value: string): void {
    const length = this.buffer.write(value, this.at + 4, 'utf8');
    this.buffer.writeUInt32LE(length, this.at);
    this.at += 4 + length;
  }

  /** Raw bytes after their length (u32). */
  bytes(value: Uint8Array): void {
    this.buffer.writeUInt32LE(value.length, this.at);
    this.buffer.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  /** The written part, sharing memory with the buffer. */
  written(): Buffer {
    return this.buffer.subarray(0, this.at);
  }
}

/** Thrown by {@link BinaryReader} when a field runs past the end or is malformed. */
export class TruncatedFieldError extends Error {
  override readonly name = 'TruncatedFieldError';
}

/** Reads fields written by {@link BinaryWriter}; every read checks it stays inside the buffer. */
export class BinaryReader {
  private at = 0;

  constructor(private readonly buffer: Buffer) {}

  /** True when every byte was read. */
  get done(): boolean {
    return this.at === this.buffer.length;
  }

  private need(n: number, what: string): void {
    if (this.at + n > this.buffer.length) throw new TruncatedFieldError(`${what} runs past the end of the frame`);
  }

  u8(what: string): number {
    this.need(1, what);
    return this.buffer[this.at++];
  }

  u32(what: string): number {
    this.need(4, what);
    const value = this.buffer.readUInt32LE(this.at);
    this.at += 4;
    return value;
  }

  f64(what: string): number {
    this.need(8, what);
    const value = this.buffer.readDoubleLE(this.at);
    this.at += 8;
    return value;
  }

  str(what: string): string {
    const length = this.u32(what);
    this.need(length, what);
    const value = this.buffer.toString('utf8', this.at, this.at + length);
    this.at += length;
    return value;
  }

  /** A fresh copy of the bytes (never a view into the file buffer). */
  bytes(what: string): Uint8Array {
    const length = this.u32(what);
    this.need(length, what);
    const value = new Uint8Array(length);
    value.set(this.buffer.subarray(this.at, this.at + length));
    this.at += length;
    return value;
  }
}
