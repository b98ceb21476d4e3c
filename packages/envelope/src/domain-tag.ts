import { concatBytes, utf8 } from './bytes.js';

const DomainTag_VALUE = {
  /** A signed control request (`SignedCtl` carrying a `CtlRequest`). */
  ctlRequest: 'heddle.ctl.request.v1\n',
  /** A signed control response (`SignedCtl` carrying a `CtlResponse`). */
  ctlResponse: 'heddle.ctl.response.v1\n',
  /** Signed node facts. */
  nodeFacts: 'heddle.node-facts.v1\n',
  /** A workload package statement (the package format fixes this exact tag). */
  packageStatement: 'heddle.package.v1\n',
  /** An audit chain checkpoint. */
  chainCheckpoint: 'heddle.chain.checkpoint.v1\n',
  /** One revocation entry (a revoked package, signer or artifact). */
  revocation: 'heddle.revocation.v1\n',
  /** A whole revocation list with its generation (so entries cannot be dropped or rolled back). */
  revocationList: 'heddle.revocation-list.v1\n',
  /** An operator's signed request to the controller's operator API (`Authorization: Heddle-Ed25519`). */
  operatorRequest: 'heddle.operator-request.v1\n',
} as const;
/**
 * The domain tags. Every Heddle signature covers `tag || bytes`, one tag per use, so a signature made
 * for one purpose can never be replayed as another. Each tag ends with a newline, which no tag
 * contains elsewhere, so no tag is a prefix of another.
 */
export const DomainTag: typeof DomainTag_VALUE = Object.freeze(DomainTag_VALUE);

/** One of the values of {@link DomainTag}. */
export type DomainTagValue = (typeof DomainTag)[keyof typeof DomainTag];

const TAG_VALUES: ReadonlySet<string> = new Set(Object.values(DomainTag));
const tagBytes = new Map<string, Uint8Array>();

function tagged(tag: DomainTagValue, bytes: Uint8Array): Uint8Array {
  if (!TAG_VALUES.has(tag)) throw new TypeError(`unknown domain tag ${JSON.stringify(tag)}`);
  let prefix = tagBytes.get(tag);
  if (!prefix) {
    prefix = utf8(tag);
    tagBytes.set(tag, prefix);
  }
  return concatBytes(prefix, bytes);
}

/** The exact bytes a domain-separated signature covers: UTF-8 of the tag, then the message. */
export function domainMessage(tag: DomainTagValue, message: Uint8Array): Uint8Array {
  return tagged(tag, message);
}
