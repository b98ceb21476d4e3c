import {
  DomainTag,
  errorMessage,
  fromHex,
  isBytes,
  isHex,
  type KeyPair,
  nodeIdFromPublicKey,
  parseJson,
  signWithDomain,
  toHex,
  utf8,
  verifyWithDomain,
} from '@heddle/envelope';
import { CheckpointError } from './errors.js';

/**
 * A checkpoint: a node's signed statement that its chain had `size` events with this head hash and
 * Merkle root at time `ts`. Signed as `DomainTag.chainCheckpoint || canonical JSON of these fields`.
 */
export interface Checkpoint {
  /** Number of events covered. */
  readonly size: number;
  /** Merkle root over the first `size` event hashes, 64 hex. */
  readonly root: string;
  /** Hash of event `size - 1` (64 zeros for size 0). */
  readonly head: string;
  /** When it was made, milliseconds since the epoch. */
  readonly ts: number;
  /** The signer's Ed25519 public key, 64 hex. */
  readonly public_key: string;
  /** The signer's node id (first 32 hex of SHA-256 of the public key). */
  readonly node_id: string;
}

/**
 * A signed checkpoint as stored or sent: the exact canonical JSON text that was signed, and the
 * Ed25519 signature (128 hex) over `heddle.chain.checkpoint.v1\n || checkpoint`. A verifier never
 * re-serialises.
 */
export interface SignedCheckpoint {
  /** Canonical JSON of a {@link Checkpoint}. */
  readonly checkpoint: string;
  /** Ed25519 signature, 128 lower-case hex. */
  readonly signature: string;
}

/** The fields a signer supplies; the key fields come from the key pair. */
export interface CheckpointFields {
  readonly size: number;
  readonly root: string;
  readonly head: string;
  readonly ts: number;
}

const KEYS = ['head', 'node_id', 'public_key', 'root', 'size', 'ts'] as const;

function malformed(field: string, message: string): CheckpointError {
  return new CheckpointError('checkpoint_malformed', `checkpoint ${message}`, { field });
}

/** The fields {@link checkFields} reads, of any type (a checkpoint from the caller or from JSON). */
interface UncheckedFields {
  readonly size?: unknown;
  readonly root?: unknown;
  readonly head?: unknown;
  readonly ts?: unknown;
}

function checkFields(v: UncheckedFields): void {
  if (typeof v.size !== 'number' || !Number.isSafeInteger(v.size) || v.size < 0)
    throw malformed('size', 'size must be a non-negative integer');
  if (!isHex(v.root, 32)) throw malformed('root', 'root must be 64 lower-case hex');
  if (!isHex(v.head, 32)) throw malformed('head', 'head must be 64 lower-case hex');
  if (typeof v.ts !== 'number' || !Number.isSafeInteger(v.ts) || v.ts < 0)
    throw malformed('ts', 'ts must be a non-negative integer');
}

function canonicalCheckpoint(c: Checkpoint): string {
  return `{"head":"${c.head}","node_id":"${c.node_id}","public_key":"${c.public_key}","root":"${c.root}","size":${c.size},"ts":${c.ts}}`;
}

/** Signs a checkpoint with the node's key pair. Throws `checkpoint_malformed` for bad fields. */
export function signCheckpoint(fields: CheckpointFields, keys: KeyPair): SignedCheckpoint {
  checkFields(fields);
  if (!isBytes(keys.publicKey, 32)) throw malformed('public_key', 'public key must be 32 bytes');
  const checkpoint: Checkpoint = {
    size: fields.size,
    root: fields.root,
    head: fields.head,
    ts: fields.ts,
    public_key: toHex(keys.publicKey),
    node_id: nodeIdFromPublicKey(keys.publicKey),
  };
  const text = canonicalCheckpoint(checkpoint);
  const signature = signWithDomain(DomainTag.chainCheckpoint, keys.secretKey, utf8(text));
  return { checkpoint: text, signature: toHex(signature) };
}

/**
 * Verifies a signed checkpoint with nothing but the signer's public key and returns its fields.
 * Throws `CheckpointError`: `checkpoint_malformed` (shape, strict canonical JSON, field values),
 * `checkpoint_key_mismatch` (it names another public key or a node id not derived from it),
 * `checkpoint_signature` (the signature does not verify).
 */
export function verifyCheckpoint(signed: SignedCheckpoint, publicKey: Uint8Array): Checkpoint {
  if (!isBytes(publicKey, 32)) throw new TypeError('publicKey must be 32 bytes');
  // cast: a JavaScript caller may pass anything: every field is checked again below
  const s = signed as unknown as Record<string, unknown>;
  if (typeof s !== 'object' || s === null) throw malformed('$', 'is not an object');
  if (typeof s.checkpoint !== 'string') throw malformed('checkpoint', 'text is missing');
  if (!isHex(s.signature, 64)) throw malformed('signature', 'signature must be 128 lower-case hex');
  let value: unknown;
  try {
    value = parseJson(s.checkpoint, { maxBytes: 4096, maxDepth: 2 });
  } catch (err) {
    throw new CheckpointError('checkpoint_malformed', `checkpoint is not valid JSON: ${errorMessage(err)}`, {
      field: 'checkpoint',
      cause: err,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformed('checkpoint', 'is not an object');
  // cast: a non-array object (checked just above): its fields are checked one by one below
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v).sort();
  if (keys.length !== KEYS.length || keys.some((k, i) => k !== KEYS[i])) {
    throw malformed('checkpoint', `must have exactly the fields ${KEYS.join(', ')}`);
  }
  checkFields(v);
  if (!isHex(v.public_key, 32)) throw malformed('public_key', 'public_key must be 64 lower-case hex');
  if (typeof v.node_id !== 'string') throw malformed('node_id', 'node_id must be a string');
  // cast: every field of a Checkpoint was checked above
  const c = v as unknown as Checkpoint;
  if (canonicalCheckpoint(c) !== s.checkpoint) throw malformed('checkpoint', 'text is not in canonical form');
  if (c.public_key !== toHex(publicKey)) {
    throw new CheckpointError('checkpoint_key_mismatch', 'checkpoint names another public key', {
      field: 'public_key',
    });
  }
  if (c.node_id !== nodeIdFromPublicKey(publicKey)) {
    throw new CheckpointError('checkpoint_key_mismatch', 'checkpoint node_id is not that of its public key', {
      field: 'node_id',
    });
  }
  if (!verifyWithDomain(DomainTag.chainCheckpoint, publicKey, utf8(s.checkpoint), fromHex(s.signature))) {
    throw new CheckpointError('checkpoint_signature', 'checkpoint signature does not verify', {
      field: 'signature',
    });
  }
  return Object.freeze({ ...c });
}

/**
 * Parses a signed checkpoint from JSON text (as written to a file or sent): strict JSON with exactly
 * `checkpoint` and `signature`. Throws `checkpoint_malformed`. Does not verify the signature.
 */
export function parseSignedCheckpoint(text: string): SignedCheckpoint {
  let v: unknown;
  try {
    v = parseJson(text, { maxBytes: 8192, maxDepth: 2 });
  } catch (err) {
    throw new CheckpointError(
      'checkpoint_malformed',
      `signed checkpoint is not valid JSON: ${errorMessage(err)}`,
      {
        field: '$',
        cause: err,
      },
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw malformed('$', 'is not an object');
  const keys = Object.keys(v).sort();
  if (keys.length !== 2 || keys[0] !== 'checkpoint' || keys[1] !== 'signature') {
    throw malformed('$', 'must have exactly the fields checkpoint, signature');
  }
  // cast: a non-array object with exactly these two keys (checked above)
  const r = v as Record<string, unknown>;
  if (typeof r.checkpoint !== 'string') throw malformed('checkpoint', 'text must be a string');
  if (!isHex(r.signature, 64)) throw malformed('signature', 'signature must be 128 lower-case hex');
  return { checkpoint: r.checkpoint, signature: r.signature };
}
