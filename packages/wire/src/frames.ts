import { utf8Length } from '@heddle/envelope';
import { type PieceMapJson, PieceMapJsonSchema } from '@heddle/package';
import { MAX_MESSAGE_BYTES, type SignedCtl, SignedCtlSchema } from '@heddle/protocol';
import { z } from 'zod';
import { MAX_TEXT_FRAME_BYTES } from './limits.js';

/** A request or call id: an unsigned 32-bit integer chosen by the side that opens it. */
const Id = z.int().min(0).max(0xffff_ffff);
const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');
const Code = z.string().regex(/^[a-z_]{1,64}$/, 'expected 1 to 64 of [a-z_]');
/** Frame string limits count UTF-8 bytes, like the signed messages' (docs/protocol.md 13.2). */
const Reason = z.string().refine((r) => utf8Length(r) <= 4096, 'at most 4096 bytes of UTF-8');
const Method = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'expected printable ASCII, 1 to 128 characters');
const Path = z
  .string()
  .min(1)
  .refine((p) => utf8Length(p) <= 255, 'at most 255 bytes of UTF-8');

/** Client to server: a signed control request. `method` is the transport method (must equal the signed one). */
export interface CallFrame {
  readonly t: 'call';
  readonly id: number;
  readonly method: string;
  readonly signed: SignedCtl;
}
/** Client to server: the piece map of one file, answering a `fetch_map`. */
export interface PieceMapFrame {
  readonly t: 'piece_map';
  readonly id: number;
  readonly map: PieceMapJson;
}
/** Client to server: a refused fetch request. */
export interface FetchRefusedFrame {
  readonly t: 'fetch_refused';
  readonly id: number;
  readonly code: string;
  readonly reason: string;
}
/** Server to client: the signed response to call `id`. */
export interface ResultFrame {
  readonly t: 'result';
  readonly id: number;
  readonly signed: SignedCtl;
}
/** Either direction: a protocol error; the sender closes the connection after it. */
export interface ErrorFrame {
  readonly t: 'error';
  readonly id?: number;
  readonly code: string;
  readonly reason: string;
}
/** Server to client: send the envelope of the package of call `call_id` (answered by a binary frame). */
export interface FetchManifestFrame {
  readonly t: 'fetch_manifest';
  readonly id: number;
  readonly call_id: number;
  readonly manifest_hash: string;
}
/** Server to client: send the piece map of file `path` of call `call_id`'s package. */
export interface FetchMapFrame {
  readonly t: 'fetch_map';
  readonly id: number;
  readonly call_id: number;
  readonly path: string;
}
/** Server to client: send piece `index` of file `path` (answered by a binary frame). */
export interface FetchPieceFrame {
  readonly t: 'fetch_piece';
  readonly id: number;
  readonly call_id: number;
  readonly path: string;
  readonly index: number;
}

/** Text frames a server accepts. */
export type ClientFrame = CallFrame | PieceMapFrame | FetchRefusedFrame | ErrorFrame;
/** Text frames a client accepts. */
export type ServerFrame = ResultFrame | ErrorFrame | FetchManifestFrame | FetchMapFrame | FetchPieceFrame;

const ErrorSchema = z.strictObject({
  t: z.literal('error'),
  id: Id.exactOptional(),
  code: Code,
  reason: Reason,
});

/** Schema of the text frames a server accepts. */
export const ClientFrameSchema: z.ZodType<ClientFrame> = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('call'), id: Id, method: Method, signed: SignedCtlSchema }),
  z.strictObject({ t: z.literal('piece_map'), id: Id, map: PieceMapJsonSchema }),
  z.strictObject({ t: z.literal('fetch_refused'), id: Id, code: Code, reason: Reason }),
  ErrorSchema,
]);

/** Schema of the text frames a client accepts. */
export const ServerFrameSchema: z.ZodType<ServerFrame> = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('result'), id: Id, signed: SignedCtlSchema }),
  ErrorSchema,
  z.strictObject({ t: z.literal('fetch_manifest'), id: Id, call_id: Id, manifest_hash: Hash }),
  z.strictObject({ t: z.literal('fetch_map'), id: Id, call_id: Id, path: Path }),
  z.strictObject({
    t: z.literal('fetch_piece'),
    id: Id,
    call_id: Id,
    path: Path,
    index: z.int().min(0).max(0xffff_ffff),
  }),
]);

// The call path's two frames (`call` to a server, `result` to a client) are recognised by hand before
// the schema runs: a frame recognised here is exactly what the schema would output, and anything
// else (other types, any defect) goes to the schema, which decides and words the error.
const SIGNED_KEYS: ReadonlySet<string> = new Set(['payload', 'public_key', 'signature']);
const HEX64_RE = /^[0-9a-f]{64}$/;
const HEX128_RE = /^[0-9a-f]{128}$/;
const METHOD_RE = /^[\x21-\x7e]{1,128}$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Only the keys in `allowed`, counting inherited enumerable ones as the schema's strict objects do. */
function hasOnlyKeys(v: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in v) if (!allowed.has(key)) return false;
  return true;
}

const isId = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= 0xffff_ffff;

function fastSigned(v: unknown): SignedCtl | undefined {
  if (!isPlainObject(v) || !hasOnlyKeys(v, SIGNED_KEYS)) return undefined;
  const { payload, public_key, signature } = v;
  if (typeof payload !== 'string' || payload.length > MAX_MESSAGE_BYTES) return undefined;
  if (utf8Length(payload) > MAX_MESSAGE_BYTES) return undefined;
  if (typeof public_key !== 'string' || !HEX64_RE.test(public_key)) return undefined;
  if (typeof signature !== 'string' || !HEX128_RE.test(signature)) return undefined;
  return { payload, public_key, signature };
}

const CALL_KEYS: ReadonlySet<string> = new Set(['t', 'id', 'method', 'signed']);
const RESULT_KEYS: ReadonlySet<string> = new Set(['t', 'id', 'signed']);

function fastCallFrame(v: Record<string, unknown>): CallFrame | undefined {
  if (v.t !== 'call' || !hasOnlyKeys(v, CALL_KEYS)) return undefined;
  const { id, method } = v;
  if (!isId(id) || typeof method !== 'string' || !METHOD_RE.test(method)) return undefined;
  const signed = fastSigned(v.signed);
  return signed === undefined ? undefined : { t: 'call', id, method, signed };
}

function fastResultFrame(v: Record<string, unknown>): ResultFrame | undefined {
  if (v.t !== 'result' || !hasOnlyKeys(v, RESULT_KEYS)) return undefined;
  const id = v.id;
  if (!isId(id)) return undefined;
  const signed = fastSigned(v.signed);
  return signed === undefined ? undefined : { t: 'result', id, signed };
}

const FAST_PATHS: ReadonlyMap<unknown, (v: Record<string, unknown>) => unknown> = new Map<
  unknown,
  (v: Record<string, unknown>) => unknown
>([
  [ClientFrameSchema, fastCallFrame],
  [ServerFrameSchema, fastResultFrame],
]);

/** The result of {@link parseFrame}: the frame, or the error code and reason to answer with. */
export type ParsedFrame<F> =
  | { readonly ok: true; readonly frame: F }
  | {
      readonly ok: false;
      readonly code: 'malformed_frame' | 'unknown_frame' | 'frame_too_large';
      readonly reason: string;
    };

/**
 * Parses one text frame against `schema`: size at most {@link MAX_TEXT_FRAME_BYTES}, JSON, an object
 * whose `t` is one of `known`, then the schema. Never throws.
 */
export function parseFrame<F>(
  text: string,
  schema: z.ZodType<F>,
  known: ReadonlySet<string>,
): ParsedFrame<F> {
  if (text.length > MAX_TEXT_FRAME_BYTES || Buffer.byteLength(text, 'utf8') > MAX_TEXT_FRAME_BYTES) {
    return { ok: false, code: 'frame_too_large', reason: `text frame exceeds ${MAX_TEXT_FRAME_BYTES} bytes` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'malformed_frame', reason: 'the text frame is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, code: 'malformed_frame', reason: 'the text frame is not a JSON object' };
  }
  // cast: a non-array object (checked just above): only t is read, of unknown type
  const t = (value as { t?: unknown }).t;
  if (typeof t !== 'string' || !known.has(t)) {
    return {
      ok: false,
      code: 'unknown_frame',
      reason: `unknown frame type ${JSON.stringify(t)?.slice(0, 64)}`,
    };
  }
  // cast: a non-array object (checked above)
  const fast = FAST_PATHS.get(schema)?.(value as Record<string, unknown>);
  if (fast !== undefined) return { ok: true, frame: fast as F };
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue?.path.join('.') || '$';
    return {
      ok: false,
      code: 'malformed_frame',
      reason: `${t} frame field ${field}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { ok: true, frame: r.data };
}

/** Frame types a server accepts. */
export const CLIENT_FRAME_TYPES: ReadonlySet<string> = new Set([
  'call',
  'piece_map',
  'fetch_refused',
  'error',
]);
/** Frame types a client accepts. */
export const SERVER_FRAME_TYPES: ReadonlySet<string> = new Set([
  'result',
  'error',
  'fetch_manifest',
  'fetch_map',
  'fetch_piece',
]);
