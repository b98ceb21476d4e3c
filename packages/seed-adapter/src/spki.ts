import { createHash, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { SeedError } from './errors.js';

const PIN_RE = /^[0-9a-f]{64}$/;

/** Hex SHA-256 of the DER SubjectPublicKeyInfo of a public key (or of the public half of a private key). */
export function spkiSha256OfKey(key: KeyObject): string {
  const pub = key.type === 'public' ? key : createPublicKey(key);
  const der = pub.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/**
 * The Seed pin of a certificate: hex SHA-256 of the DER SubjectPublicKeyInfo of its public key (the
 * same value as `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | sha256sum`). Accepts
 * a PEM text, DER bytes or an `X509Certificate`. Throws `SeedError('invalid_argument')` for something
 * that is not a certificate.
 */
export function spkiSha256(cert: string | Uint8Array | X509Certificate): string {
  let x509: X509Certificate;
  if (cert instanceof X509Certificate) x509 = cert;
  else {
    try {
      x509 = new X509Certificate(typeof cert === 'string' ? cert : Buffer.from(cert));
    } catch (err) {
      const why = err instanceof Error ? err.message.slice(0, 200) : 'unparseable';
      throw new SeedError('invalid_argument', `not an X.509 certificate (${why})`, { field: 'cert' });
    }
  }
  return spkiSha256OfKey(x509.publicKey);
}

/**
 * Normalizes an operator-given SPKI pin: 64 hex digits, case-insensitive, optionally separated by
 * colons (as some tools print them) or prefixed `sha256:`; returns lower-case hex. Throws
 * `SeedError('invalid_argument', field 'spki')` otherwise.
 */
export function normalizeSpkiPin(pin: string): string {
  const hex =
    typeof pin === 'string'
      ? pin
          .trim()
          .replace(/^sha256:/i, '')
          .replaceAll(':', '')
          .toLowerCase()
      : '';
  if (!PIN_RE.test(hex)) {
    throw new SeedError('invalid_argument', 'spki must be the hex SHA-256 (64 hex digits) of the Seed key', {
      field: 'spki',
    });
  }
  return hex;
}
