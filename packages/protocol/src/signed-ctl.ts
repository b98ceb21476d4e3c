import type { KeyPair } from '@heddle/envelope';
import {
  canonicalJson,
  type DomainTagValue,
  isHex,
  signWithDomain,
  toHex,
  utf8,
  utf8Length,
  verifyWithDomain,
} from '@heddle/envelope';
import { z } from 'zod';
import { MAX_MESSAGE_BYTES, MAX_PAYLOAD_DEPTH } from './limits.js';

/**
 * A signed control message: the exact JSON text that was signed, the signer's Ed25519 public key and
 * the signature over `domain tag || UTF-8(payload)`. A verifier checks the signature over `payload` as
 * received and parses that same text; it never re-serialises.
 */
export interface SignedCtl {
  /** The canonical JSON text of a `CtlRequest` or `CtlResponse`, at most 256 KiB of UTF-8. */
  readonly payload: string;
  /** The signer's 32-byte Ed25519 public key as 64 lower-case hex characters. */
  readonly public_key: string;
  /** The 64-byte Ed25519 signature as 128 lower-case hex characters. */
  readonly signature: string;
}

/** Schema of the {@link SignedCtl} envelope (form only: the signature is not checked here). */
export const SignedCtlSchema: z.ZodType<SignedCtl> = z.strictObject({
  payload: z.string().refine((p) => p.length <= MAX_MESSAGE_BYTES && utf8Length(p) <= MAX_MESSAGE_BYTES, {
    message: `at most ${MAX_MESSAGE_BYTES} bytes of UTF-8`,
  }),
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'expected 128 lower-case hex characters'),
});

/**
 * Serialises `message` as canonical JSON (bounded by {@link MAX_MESSAGE_BYTES} and
 * {@link MAX_PAYLOAD_DEPTH}) and signs it under `tag`. Throws `EnvelopeError` `canonical_json` when
 * the message cannot be canonicalised or is too large.
 */
export function signCtlMessage(tag: DomainTagValue, message: unknown, keyPair: KeyPair): SignedCtl {
  const payload = canonicalJson(message, { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_PAYLOAD_DEPTH });
  const signature = signWithDomain(tag, keyPair.secretKey, utf8(payload));
  return { payload, public_key: toHex(keyPair.publicKey), signature: toHex(signature) };
}

/** Why an envelope could not be decoded: its form, its size, its text, or the key or signature encoding. */
export type EnvelopeDefect = 'shape' | 'size' | 'text' | 'key' | 'signature';

/** The result of {@link decodeSignedCtl}. */
export type DecodedSignedCtl =
  | {
      readonly ok: true;
      readonly payload: string;
      readonly payloadBytes: Uint8Array;
      readonly publicKey: Uint8Array;
      readonly signature: Uint8Array;
    }
  | { readonly ok: false; readonly defect: EnvelopeDefect; readonly field: string; readonly reason: string };

const FIELDS: ReadonlySet<string> = new Set(['payload', 'public_key', 'signature']);

/**
 * Checks the envelope's form and size and decodes its hex, in that order, without touching the
 * signature. Never throws for plain data: every defect is returned with the field and a reason.
 */
export function decodeSignedCtl(signed: unknown): DecodedSignedCtl {
  const fail = (defect: EnvelopeDefect, field: string, reason: string): DecodedSignedCtl => ({
    ok: false,
    defect,
    field,
    reason,
  });
  if (typeof signed !== 'object' || signed === null || Array.isArray(signed)) {
    return fail('shape', '$', 'the signed message must be an object {payload, public_key, signature}');
  }
  for (const key of Object.keys(signed)) {
    if (!FIELDS.has(key))
      return fail('shape', key, `unknown field ${JSON.stringify(key)} in the signed message`);
  }
  // cast: `signed` was checked to be a non-null, non-array object just above.
  const { payload, public_key: publicKey, signature } = signed as Record<string, unknown>;
  if (typeof payload !== 'string') return fail('shape', 'payload', 'payload must be a string');
  if (typeof publicKey !== 'string') return fail('shape', 'public_key', 'public_key must be a string');
  if (typeof signature !== 'string') return fail('shape', 'signature', 'signature must be a string');
  // Cheap bound first (each UTF-16 unit is at least one UTF-8 byte), then the exact one.
  if (payload.length > MAX_MESSAGE_BYTES || Buffer.byteLength(payload, 'utf8') > MAX_MESSAGE_BYTES) {
    return fail('size', 'payload', `payload exceeds ${MAX_MESSAGE_BYTES} bytes of UTF-8`);
  }
  if (!payload.isWellFormed())
    return fail('text', 'payload', 'payload contains a lone surrogate (not valid UTF-8)');
  if (!isHex(publicKey, 32))
    return fail('key', 'public_key', 'public_key is not 64 lower-case hex characters');
  if (!isHex(signature, 64))
    return fail('signature', 'signature', 'signature is not 128 lower-case hex characters');
  return {
    ok: true,
    payload,
    payloadBytes: utf8(payload),
    // Both were just checked to be lower-case hex of the right length: decode without checking again.
    publicKey: new Uint8Array(Buffer.from(publicKey, 'hex')),
    signature: new Uint8Array(Buffer.from(signature, 'hex')),
  };
}

/** Verifies a decoded envelope's signature under `tag` (strict RFC 8032). Never throws. */
export function checkCtlSignature(
  tag: DomainTagValue,
  decoded: {
    readonly payloadBytes: Uint8Array;
    readonly publicKey: Uint8Array;
    readonly signature: Uint8Array;
  },
): boolean {
  try {
    return verifyWithDomain(tag, decoded.publicKey, decoded.payloadBytes, decoded.signature);
  } catch {
    return false;
  }
}
