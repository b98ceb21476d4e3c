import { errorMessage, HEX64_RE, parseJson, parsePublicKey, readTextBounded, toHex } from '@heddle/envelope';
import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';

/** The `schema` of a trust file. */
export const TRUST_SCHEMA = 'heddle.trust.v1';

/** Largest accepted trust file: 256 KiB. */
export const MAX_TRUST_FILE_BYTES: number = 256 * 1024;

/** Who a pinned key belongs to: operators may sign packages and revocations, publishers packages only. */
export type TrustRole = 'operator' | 'publisher';

/** One pinned key. */
export interface TrustAnchor {
  /** A short name for people and logs, `[a-z0-9][a-z0-9._-]{0,63}`, unique in the file. */
  readonly id: string;
  /** The key's role. */
  readonly role: TrustRole;
  /** The public key, 64 lower-case hex characters (PEM in the file is normalised to hex). */
  readonly publicKey: string;
}

/** The JSON form of a trust file, as written. */
export interface TrustFile {
  schema: typeof TRUST_SCHEMA;
  keys: { id: string; role: TrustRole; public_key: string }[];
  threshold?: number;
}

/**
 * Schema of a trust file (public keys are parsed separately, hex or PEM). An empty `keys` list is
 * valid and trusts nobody: every package is then refused `untrusted_signer` (what a freshly
 * initialised host has until its operator pins a key).
 */
export const TrustFileSchema: z.ZodType<TrustFile> = z.strictObject({
  schema: z.literal(TRUST_SCHEMA),
  keys: z
    .array(
      z.strictObject({
        id: z
          .string()
          .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a key id matching [a-z0-9][a-z0-9._-]{0,63}'),
        role: z.enum(['operator', 'publisher']),
        public_key: z.string().min(1).max(1024),
      }),
    )
    .max(256),
  threshold: z.int().min(1).exactOptional(),
});

/**
 * The keys a host or operator trusts (its trust anchors), with the number of distinct pinned signatures
 * a package needs (the threshold, 1 by default).
 */
export class TrustAnchors {
  /** The pinned keys, in file order. */
  readonly anchors: readonly TrustAnchor[];
  /** Distinct valid pinned signatures a package needs. */
  readonly threshold: number;
  readonly #byKey: Map<string, TrustAnchor>;

  /**
   * Builds anchors from a list. Throws `trust_invalid` (naming the field) for a duplicate id, a
   * duplicate key, a malformed key or a threshold above the number of keys.
   */
  constructor(anchors: readonly TrustAnchor[], threshold = 1) {
    const byKey = new Map<string, TrustAnchor>();
    const ids = new Set<string>();
    anchors.forEach((a, i) => {
      if (!HEX64_RE.test(a.publicKey)) {
        throw new PackageError(
          'trust_invalid',
          `keys[${i}].public_key: expected 64 lower-case hex characters`,
          {
            field: `keys[${i}].public_key`,
          },
        );
      }
      if (ids.has(a.id)) {
        throw new PackageError('trust_invalid', `keys[${i}].id: duplicate key id ${JSON.stringify(a.id)}`, {
          field: `keys[${i}].id`,
        });
      }
      if (byKey.has(a.publicKey)) {
        throw new PackageError('trust_invalid', `keys[${i}].public_key: the same key is pinned twice`, {
          field: `keys[${i}].public_key`,
        });
      }
      ids.add(a.id);
      byKey.set(a.publicKey, a);
    });
    if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > Math.max(1, anchors.length)) {
      throw new PackageError(
        'trust_invalid',
        `threshold: ${threshold} must be between 1 and the number of keys (${anchors.length})`,
        {
          field: 'threshold',
        },
      );
    }
    this.anchors = Object.freeze([...anchors]);
    this.threshold = threshold;
    this.#byKey = byKey;
  }

  /** The anchor pinning `publicKeyHex`, or undefined. */
  get(publicKeyHex: string): TrustAnchor | undefined {
    return this.#byKey.get(publicKeyHex);
  }

  /** True when `publicKeyHex` is pinned (any role). */
  isPinned(publicKeyHex: string): boolean {
    return this.#byKey.has(publicKeyHex);
  }

  /** Public keys (hex) of the operator role: the keys that may sign revocations. */
  operatorKeys(): string[] {
    return this.anchors.filter((a) => a.role === 'operator').map((a) => a.publicKey);
  }

  /** The trust file form (keys as hex). */
  toJSON(): TrustFile {
    const file: TrustFile = {
      schema: TRUST_SCHEMA,
      keys: this.anchors.map((a) => ({ id: a.id, role: a.role, public_key: a.publicKey })),
    };
    if (this.threshold !== 1) file.threshold = this.threshold;
    return file;
  }
}

/**
 * Parses trust file text: strict JSON, `{schema: "heddle.trust.v1", keys: [{id, role, public_key}],
 * threshold?}` with each public key as hex or a PEM block. Throws `trust_invalid` naming the field.
 */
export function parseTrust(text: string): TrustAnchors {
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: MAX_TRUST_FILE_BYTES });
  } catch (err) {
    throw new PackageError('trust_invalid', `trust file: ${errorMessage(err)}`, {
      field: '$',
      cause: err,
    });
  }
  const r = TrustFileSchema.safeParse(value);
  if (!r.success) {
    const { field, message } = zodIssue(r.error);
    throw new PackageError('trust_invalid', message, { field });
  }
  const anchors = r.data.keys.map((k, i): TrustAnchor => {
    let key: Uint8Array;
    try {
      key = parsePublicKey(k.public_key);
    } catch (err) {
      throw new PackageError('trust_invalid', `keys[${i}].public_key: ${errorMessage(err)}`, {
        field: `keys[${i}].public_key`,
        cause: err,
      });
    }
    return { id: k.id, role: k.role, publicKey: toHex(key) };
  });
  return new TrustAnchors(anchors, r.data.threshold ?? 1);
}

/** Reads and parses a trust file (at most 256 KiB). Throws `trust_invalid` when unreadable or malformed. */
export function loadTrustFile(path: string): TrustAnchors {
  let text: string;
  try {
    text = readTextBounded(path, MAX_TRUST_FILE_BYTES);
  } catch (err) {
    throw new PackageError('trust_invalid', `cannot read trust file ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  return parseTrust(text);
}
