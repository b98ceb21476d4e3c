import { DomainTag, domainMessage, fromHex, sha256Hex, sign, toHex, utf8, verify } from '@heddle/envelope';

/** The scheme of a signed operator request: `Authorization: Heddle-Ed25519 key=..., ts=..., nonce=..., sig=...`. */
export const SIGNED_SCHEME = 'Heddle-Ed25519';

/** The parameters of a `Heddle-Ed25519` authorization header. */
export interface SignedAuth {
  /** The operator's Ed25519 public key, 64 lower-case hex characters. */
  readonly key: string;
  /** When the request was signed (Unix ms). */
  readonly ts: number;
  /** 32 lower-case hex characters, fresh for each request. */
  readonly nonce: string;
  /** The Ed25519 signature over {@link signedMessage}, 128 lower-case hex characters. */
  readonly sig: string;
}

/** Why a header is not a valid `Heddle-Ed25519` header: the parameter and what is wrong. */
export interface AuthHeaderIssue {
  readonly field: string;
  readonly message: string;
}

const PARAMS: Readonly<Record<keyof SignedAuth, RegExp>> = {
  key: /^[0-9a-f]{64}$/,
  ts: /^(0|[1-9][0-9]{0,14})$/,
  nonce: /^[0-9a-f]{32}$/,
  sig: /^[0-9a-f]{128}$/,
};
const NAMES = Object.keys(PARAMS);

/** Longest header accepted (a valid one is about 290 characters). */
const MAX_HEADER = 1024;

/**
 * Parses the value of an `Authorization` header of the `Heddle-Ed25519` scheme (docs/operator-api.md,
 * "Signed requests"): the scheme, one space, then `key`, `ts`, `nonce` and `sig` each exactly once,
 * in any order, as `name=value` separated by commas with optional spaces or tabs. Answers the
 * parameters or the first issue; never throws.
 */
export function parseSignedAuth(header: string): SignedAuth | AuthHeaderIssue {
  if (header.length > MAX_HEADER) return { field: '$', message: `longer than ${MAX_HEADER} characters` };
  if (!header.startsWith(`${SIGNED_SCHEME} `))
    return { field: 'scheme', message: `expected "${SIGNED_SCHEME} "` };
  const seen = new Map<string, string>();
  for (const part of header.slice(SIGNED_SCHEME.length + 1).split(',')) {
    const m = /^[ \t]*([a-z]+)=([0-9a-f]*)[ \t]*$/.exec(part);
    if (m === null)
      return { field: '$', message: `not a name=value parameter: ${JSON.stringify(part.slice(0, 40))}` };
    const [, name = '', value = ''] = m;
    if (!NAMES.includes(name)) return { field: name, message: 'unknown parameter' };
    if (seen.has(name)) return { field: name, message: 'given twice' };
    // cast: `name` is one of PARAMS' keys (checked just above).
    if (!PARAMS[name as keyof SignedAuth].test(value)) return { field: name, message: describe(name) };
    seen.set(name, value);
  }
  for (const name of NAMES) if (!seen.has(name)) return { field: name, message: 'missing' };
  const ts = Number(seen.get('ts'));
  if (!Number.isSafeInteger(ts)) return { field: 'ts', message: describe('ts') };
  return { key: seen.get('key') ?? '', ts, nonce: seen.get('nonce') ?? '', sig: seen.get('sig') ?? '' };
}

function describe(name: string): string {
  switch (name) {
    case 'key':
      return 'expected 64 lower-case hex characters (an Ed25519 public key)';
    case 'ts':
      return 'expected Unix milliseconds (decimal, no leading zero)';
    case 'nonce':
      return 'expected 32 lower-case hex characters';
    default:
      return 'expected 128 lower-case hex characters (an Ed25519 signature)';
  }
}

/** Whether a parse answer is an issue. */
export function isAuthIssue(v: SignedAuth | AuthHeaderIssue): v is AuthHeaderIssue {
  return 'message' in v;
}

/** The header value of `auth`. */
export function formatSignedAuth(auth: SignedAuth): string {
  return `${SIGNED_SCHEME} key=${auth.key}, ts=${auth.ts}, nonce=${auth.nonce}, sig=${auth.sig}`;
}

/** What a signature covers, before the domain tag. */
export interface SignedRequestParts {
  /** `GET`, `POST`, `DELETE` (upper case). */
  readonly method: string;
  /** The request target as sent: the path and the query (`/v1/nodes/n1?force=1`), no scheme or host. */
  readonly target: string;
  readonly ts: number;
  readonly nonce: string;
  /** The request body's bytes as sent (empty for none). */
  readonly body: Uint8Array;
}

/**
 * The canonical string of a request: `method "\n" target "\n" ts "\n" nonce "\n" hex(sha256(body))`.
 * The signature covers `"heddle.operator-request.v1\n"` followed by its UTF-8 bytes.
 */
export function canonicalRequest(p: SignedRequestParts): string {
  return `${p.method}\n${p.target}\n${p.ts}\n${p.nonce}\n${sha256Hex(p.body)}`;
}

/** The exact bytes an operator signs: the domain tag, then the canonical string. */
export function signedMessage(p: SignedRequestParts): Uint8Array {
  return domainMessage(DomainTag.operatorRequest, utf8(canonicalRequest(p)));
}

/** Signs a request with an operator's key pair: the header's parameters. */
export function signRequest(
  keys: { readonly publicKey: Uint8Array; readonly secretKey: Uint8Array },
  p: SignedRequestParts,
): SignedAuth {
  const sig = sign(keys.secretKey, signedMessage(p));
  return { key: toHex(keys.publicKey), ts: p.ts, nonce: p.nonce, sig: toHex(sig) };
}

/** Whether `auth.sig` is the signature of `auth.key` over the request (false for any malformed key). */
export function verifySignedAuth(auth: SignedAuth, p: Omit<SignedRequestParts, 'ts' | 'nonce'>): boolean {
  try {
    return verify(
      fromHex(auth.key),
      signedMessage({ ...p, ts: auth.ts, nonce: auth.nonce }),
      fromHex(auth.sig),
    );
  } catch {
    return false;
  }
}
