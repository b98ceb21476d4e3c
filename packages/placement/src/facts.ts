import {
  canonicalJson,
  DomainTag,
  errorMessage,
  fromHex,
  isNodeId,
  nodeIdFromPublicKey,
  parseJson,
  publicKeyFromSecret,
  signWithDomain,
  toHex,
  utf8,
  verifyWithDomain,
} from '@heddle/envelope';
import { z } from 'zod';
import { type Capability, CapabilityListSchema } from './capability.js';
import { PlacementError } from './errors.js';
import { parseOrThrow } from './parse.js';

/**
 * What a node says about itself, signed with its own key: its capabilities, when it said so, how long
 * that holds (`ttl_ms`) and a sequence number that grows with every new statement. It carries no
 * trust tier: the operator assigns that, never the node.
 */
export interface NodeFacts {
  /** The node's id (must be the id of the signing key). */
  readonly node_id: string;
  /** When the facts were issued (Unix ms, the node's clock). */
  readonly issued_at_ms: number;
  /** How long they hold (ms), 1 ms to {@link MAX_FACTS_TTL_MS}. */
  readonly ttl_ms: number;
  /** Sequence number; a cache accepts only a higher one than it holds. */
  readonly seq: number;
  /** The node's capabilities. */
  readonly capabilities: readonly Capability[];
}

/** Signed facts as they travel: the exact payload string, the signer's key and the signature. */
export interface SignedNodeFacts {
  /** Canonical JSON of the {@link NodeFacts}, exactly as signed. */
  readonly payload: string;
  /** Ed25519 public key, 64 lower-case hex. */
  readonly public_key: string;
  /** Signature over `DomainTag.nodeFacts || payload`, 128 lower-case hex. */
  readonly signature: string;
}

/** Longest TTL facts may carry: one day. */
export const MAX_FACTS_TTL_MS: number = 24 * 60 * 60 * 1000;
/** Largest signed facts payload (bytes). */
export const MAX_FACTS_PAYLOAD_BYTES: number = 256 * 1024;

/** Fields a node may not put in its facts: a trust tier is the operator's to assign. */
const SELF_TIER_FIELDS = ['tier', 'trust_tier', 'trust'] as const;

/** Schema of {@link NodeFacts}: unknown fields (a self-asserted tier among them) are refused. */
export const NodeFactsSchema: z.ZodType<NodeFacts> = z.strictObject({
  node_id: z.string().refine(isNodeId, 'expected a node id (32 lower-case hex characters)'),
  issued_at_ms: z.int().nonnegative(),
  ttl_ms: z.int().min(1).max(MAX_FACTS_TTL_MS),
  seq: z.int().nonnegative(),
  capabilities: CapabilityListSchema,
});

/** Schema of {@link SignedNodeFacts}. */
export const SignedNodeFactsSchema: z.ZodType<SignedNodeFacts> = z.strictObject({
  payload: z.string().max(MAX_FACTS_PAYLOAD_BYTES),
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'expected 128 lower-case hex characters'),
});

/** Parses facts from an untrusted value; refuses a self-asserted tier with `self_asserted_tier`. */
export function parseNodeFacts(input: unknown): NodeFacts {
  if (typeof input === 'object' && input !== null) {
    for (const f of SELF_TIER_FIELDS) {
      if (Object.hasOwn(input, f)) {
        throw new PlacementError(
          'self_asserted_tier',
          `invalid facts: ${f}: a node may not assert its own trust tier; the operator assigns it`,
          { field: f },
        );
      }
    }
  }
  return parseOrThrow(NodeFactsSchema, input, 'invalid_facts', 'facts');
}

/**
 * Signs `facts` with the node's 32-byte secret key: the payload is the canonical JSON of the validated
 * facts, signed with `DomainTag.nodeFacts`. Throws `invalid_facts` for malformed facts and
 * `facts_wrong_key` when `node_id` is not the id of that key.
 */
export function signNodeFacts(facts: NodeFacts, secretKey: Uint8Array): SignedNodeFacts {
  const parsed = parseNodeFacts(facts);
  const publicKey = publicKeyFromSecret(secretKey);
  if (nodeIdFromPublicKey(publicKey) !== parsed.node_id) {
    throw new PlacementError('facts_wrong_key', 'facts node_id is not the id of the signing key', {
      field: 'node_id',
    });
  }
  const payload = canonicalJson(parsed);
  const signature = signWithDomain(DomainTag.nodeFacts, secretKey, utf8(payload));
  return { payload, public_key: toHex(publicKey), signature: toHex(signature) };
}

/** Facts whose signature verified, with the key that signed them. */
export interface VerifiedNodeFacts {
  /** The facts. */
  readonly facts: NodeFacts;
  /** The signing key (hex), whose id is `facts.node_id`. */
  readonly public_key: string;
}

/**
 * Verifies signed facts from an untrusted value: form, signature (strict Ed25519 over
 * `DomainTag.nodeFacts || payload`), then the payload (strict JSON, integers only, schema), and that
 * `node_id` is the id of the signing key. When `expectedKey` (hex) is given, facts signed by any other
 * key are refused with `facts_wrong_key`. Time, TTL and sequence are the cache's to check.
 */
export function verifyNodeFacts(input: unknown, expectedKey?: string): VerifiedNodeFacts {
  const signed = parseOrThrow(SignedNodeFactsSchema, input, 'invalid_facts', 'signed facts');
  if (expectedKey !== undefined && expectedKey.toLowerCase() !== signed.public_key) {
    throw new PlacementError(
      'facts_wrong_key',
      'facts signed by another key than the one expected for this node',
      {
        field: 'public_key',
      },
    );
  }
  const ok = verifyWithDomain(
    DomainTag.nodeFacts,
    fromHex(signed.public_key, 32),
    utf8(signed.payload),
    fromHex(signed.signature, 64),
  );
  if (!ok)
    throw new PlacementError('facts_signature', 'facts signature does not verify', { field: 'signature' });
  let json: unknown;
  try {
    json = parseJson(signed.payload, { maxBytes: MAX_FACTS_PAYLOAD_BYTES });
  } catch (cause) {
    throw new PlacementError('invalid_facts', `invalid facts: payload: ${errorMessage(cause)}`, {
      field: 'payload',
      cause,
    });
  }
  const facts = parseNodeFacts(json);
  if (nodeIdFromPublicKey(fromHex(signed.public_key, 32)) !== facts.node_id) {
    throw new PlacementError('facts_wrong_key', 'facts signed by another key than the node_id they name', {
      field: 'node_id',
    });
  }
  return { facts, public_key: signed.public_key };
}
