import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeedError } from './errors.js';

/** A self-signed certificate with its key and its SPKI pin. */
export interface SelfSignedCert {
  /** The certificate, PEM. */
  readonly cert: string;
  /** The private key (EC P-256), PEM. */
  readonly key: string;
  /** Hex SHA-256 of the DER SubjectPublicKeyInfo of the certificate's public key (the Seed pin). */
  readonly spki: string;
}

const CN_RE = /^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$/;

/**
 * Hex SHA-256 of the DER SubjectPublicKeyInfo of a PEM certificate's public key.
 * (The CLIENT helper owns the production `spki.ts`; this is the simulator's own copy.)
 */
export function spkiOfPem(certPem: string): string {
  const der = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/**
 * Generates a self-signed certificate (EC P-256, valid 2 days, SAN 127.0.0.1, ::1 and localhost) with the
 * `openssl` CLI in a temporary directory that is removed afterwards. For tests and the Seed simulator only.
 * Throws `SeedError('invalid_argument')` for a bad common name.
 */
export function selfSignedCert(cn = 'seed'): SelfSignedCert {
  if (!CN_RE.test(cn)) {
    throw new SeedError('invalid_argument', 'cn must be 1-64 letters, digits, dots or dashes', {
      field: 'cn',
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'heddle-seed-tls-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '2',
        '-subj',
        `/CN=${cn}`,
        '-addext',
        `subjectAltName=DNS:${cn},DNS:localhost,IP:127.0.0.1,IP:::1`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const cert = readFileSync(certPath, 'utf8');
    const key = readFileSync(keyPath, 'utf8');
    return { cert, key, spki: spkiOfPem(cert) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
