/**
 * Identifier formats of the contract, the id source port, and minting of every ref kind.
 * @remarks Identifiers are plain strings checked against {@link Patterns} where they enter (schemas at
 * the edge and in the domains); no branded types, which nothing in the engine relied on.
 * @module
 */

/** Every identifier pattern of the contract, in one place. */
export const Patterns = {
  credentialRef: /^scred_[a-f0-9]{24}$/,
  spaceRef: /^ksp_[a-f0-9]{48}$/,
  documentRef: /^sdoc_[a-f0-9]{48}$/,
  operationRef: /^docop_[a-f0-9]{48}$/,
  proposalRef: /^kprp_[a-f0-9]{48}$/,
  reviewRef: /^krvw_[a-f0-9]{48}$/,
  jobId: /^kjob_[a-f0-9]{48}$/,
  entityId: /^kent_[a-z0-9]{24}$/,
  inquiryId: /^kinq_[a-z0-9]{24}$/,
  editionId: /^kedn_[a-z0-9]{24}$/,
  sha256: /^[a-f0-9]{64}$/,
  blockId: /^[A-Za-z0-9][A-Za-z0-9._:$-]{0,127}$/,
  requestId: /^[A-Za-z0-9][A-Za-z0-9_-]{15,127}$/,
  idempotencyKey: /^[A-Za-z0-9_-]{16,128}$/,
  /** The client's optional `X-Request-Id`, echoed as meta.clientRequestId. */
  clientRequestId: /^[A-Za-z0-9_-]{16,128}$/,
  receiptRef: /^[A-Za-z0-9][A-Za-z0-9_-]{15,159}$/,
  // the library (all `<prefix>_` + 24 lowercase hex)
  itemId: /^litm_[a-f0-9]{24}$/,
  captureId: /^lcap_[a-f0-9]{24}$/,
  representationId: /^lrep_[a-f0-9]{24}$/,
  uploadId: /^lupl_[a-f0-9]{24}$/,
  displayPrefix: /^svc_agent_v1_scred_[a-f0-9]{8}\u2026$/,
} as const;

/**
 * Where fresh randomness comes from. `hex(n)` returns n lowercase hex characters;
 * `base36(n)` returns n characters of [a-z0-9].
 * @remarks Tests pass {@link seededIds} so that every ref is reproducible.
 */
export interface IdSource {
  hex(length: number): string;
  base36(length: number): string;
}

const HEX = '0123456789abcdef';
const B36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from a pool refilled by the web-standard `crypto.getRandomValues`.
 * @remarks One `getRandomValues` call costs microseconds on Node; a mutation mints several ids, so
 * the pool amortises it over 4 KiB.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
function randomByte(): number {
  if (poolAt >= pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** On Node, a Buffer over the pool: its native hex encoding of pool bytes beats building the string here. */
type HexView = { toString(encoding: 'hex', start: number, end: number): string };
const NodeBuffer = (globalThis as { Buffer?: { from(bytes: ArrayBuffer): HexView } }).Buffer;
const poolHex: HexView | null = NodeBuffer === undefined ? null : NodeBuffer.from(pool.buffer);

/** The next `n` pool bytes as hex, through {@link poolHex}. */
function poolBytesHex(view: HexView, n: number): string {
  if (poolAt + n > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const text = view.toString('hex', poolAt, poolAt + n);
  poolAt += n;
  return text;
}

const HEX_CODES = Array.from(HEX, (c) => c.charCodeAt(0));
/** Per length, the character codes of the id being built: one flat string at the end, not a chain of concatenations. */
const idCodes = new Map<number, number[]>();

/** Cryptographically random ids (see {@link randomByte}). */
export const randomIds: IdSource = {
  hex(length) {
    if (poolHex !== null && (length & 1) === 0 && length <= 2 * pool.length) return poolBytesHex(poolHex, length >>> 1);
    let codes = idCodes.get(length);
    if (codes === undefined) {
      codes = new Array<number>(length).fill(48);
      if (length <= 256) idCodes.set(length, codes);
    }
    for (let i = 0; i < length; i += 2) {
      const b = randomByte();
      codes[i] = HEX_CODES[b >> 4]!;
      if (i + 1 < length) codes[i + 1] = HEX_CODES[b & 15]!;
    }
    return String.fromCharCode.apply(null, codes);
  },
  base36(length) {
    let out = '';
    while (out.length < length) {
      const b = randomByte();
      if (b < 252) out += B36[b % 36]; // 252 = 7 * 36 keeps base36 unbiased
    }
    return out;
  },
};

/** A deterministic id source (splitmix32) for tests and reproducible fixtures. Not for production. */
export function seededIds(seed = 1): IdSource {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const pick = (alphabet: string, length: number) => {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[next() % alphabet.length];
    return out;
  };
  return { hex: (n) => pick(HEX, n), base36: (n) => pick(B36, n) };
}

/** Minting of every ref kind over one {@link IdSource}. */
export function refMinter(ids: IdSource) {
  return {
    documentRef: () => `sdoc_${ids.hex(48)}`,
    spaceRef: () => `ksp_${ids.hex(48)}`,
    operationRef: () => `docop_${ids.hex(48)}`,
    credentialRef: () => `scred_${ids.hex(24)}`,
    proposalRef: () => `kprp_${ids.hex(48)}`,
    reviewRef: () => `krvw_${ids.hex(48)}`,
    jobId: () => `kjob_${ids.hex(48)}`,
    entityId: () => `kent_${ids.base36(24)}`,
    inquiryId: () => `kinq_${ids.base36(24)}`,
    editionId: () => `kedn_${ids.base36(24)}`,
    /** Server-assigned block ids: short, so that the canonical JSON stays small. */
    blockId: () => `b${ids.base36(11)}`,
    requestId: () => `req_${ids.hex(28)}`,
  };
}
export type RefMinter = ReturnType<typeof refMinter>;
