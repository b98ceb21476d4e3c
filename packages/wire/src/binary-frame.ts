import { BINARY_HEADER_BYTES } from './limits.js';

/** First byte of every binary frame (`"H"`). */
export const BINARY_MAGIC = 0x48;

/** Kinds of binary frame: a piece of a file, or a package envelope. */
export const BinaryKind: { readonly piece: 1; readonly manifest: 2 } = Object.freeze({
  piece: 1,
  manifest: 2,
} as const);

/** One of the {@link BinaryKind} values. */
export type BinaryKindValue = (typeof BinaryKind)[keyof typeof BinaryKind];

/** A decoded binary frame. */
export interface BinaryFrame {
  /** What the bytes are. */
  readonly kind: BinaryKindValue;
  /** The id of the fetch request answered. */
  readonly id: number;
  /** The bytes (a view into the received buffer). */
  readonly data: Uint8Array;
}

// Payloads from `allocFramePayload` whose header room is still unused (each is used at most once).
const withHeaderRoom = new WeakSet<Uint8Array>();

/**
 * Allocates `length` bytes (uninitialised) with room for a binary frame header in front of them, so
 * that {@link encodeBinaryFrame} can frame them without copying. Fill them, then hand them to
 * `encodeBinaryFrame` once; the room is used by the first encode only.
 */
export function allocFramePayload(length: number): Buffer {
  const payload = Buffer.allocUnsafe(BINARY_HEADER_BYTES + length).subarray(BINARY_HEADER_BYTES);
  withHeaderRoom.add(payload);
  return payload;
}

/**
 * Encodes a binary frame: `0x48, kind, 0x00, 0x00, u32be(id)` then the bytes (8-byte header). Bytes
 * from {@link allocFramePayload} are framed in place (the header goes into the room in front of
 * them, no copy); any other bytes are copied into a new buffer.
 */
export function encodeBinaryFrame(kind: BinaryKindValue, id: number, data: Uint8Array): Buffer {
  let out: Buffer;
  if (withHeaderRoom.delete(data)) {
    out = Buffer.from(data.buffer, data.byteOffset - BINARY_HEADER_BYTES, BINARY_HEADER_BYTES + data.length);
  } else {
    out = Buffer.allocUnsafe(BINARY_HEADER_BYTES + data.length);
    out.set(data, BINARY_HEADER_BYTES);
  }
  out[0] = BINARY_MAGIC;
  out[1] = kind;
  out[2] = 0;
  out[3] = 0;
  out.writeUInt32BE(id, 4);
  return out;
}

/** Decodes a binary frame, or returns why it is not one (never throws). */
export function decodeBinaryFrame(bytes: Uint8Array): BinaryFrame | string {
  if (bytes.length < BINARY_HEADER_BYTES)
    return `binary frame shorter than its ${BINARY_HEADER_BYTES}-byte header`;
  if (bytes[0] !== BINARY_MAGIC) return 'binary frame does not start with 0x48';
  const kind = bytes[1];
  if (kind !== BinaryKind.piece && kind !== BinaryKind.manifest) return `unknown binary frame kind ${kind}`;
  if (bytes[2] !== 0 || bytes[3] !== 0) return 'binary frame reserved bytes are not zero';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind, id: view.getUint32(4), data: bytes.subarray(BINARY_HEADER_BYTES) };
}

/** The bytes of a received `ws` message as one Buffer (no copy for the usual single Buffer). */
export function rawToBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
