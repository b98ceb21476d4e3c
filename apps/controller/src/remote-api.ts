import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, inputOrSystemError } from '@heddle/cli-kit';
import { readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { certFingerprint, selfSignedCert, type TlsMaterial } from '@heddle/operator-api';
import type { RemoteApi } from './controller-config.js';

/** The self-signed certificate the controller makes for `api.remote` when none is configured. */
export const SELF_SIGNED_CERT_FILE = 'api-tls.crt';
/** Its private key (mode 0600). */
export const SELF_SIGNED_KEY_FILE = 'api-tls.key';

const MAX_PEM_BYTES = 256 * 1024;

/**
 * The certificate and key of the remote listener: the configured files, or the home's self-signed pair
 * (made on first use, kept so its fingerprint stays the same across restarts). Throws a `CliError`
 * (exit 3) naming `api.remote.tls_cert_file` or `api.remote.tls_key_file` for a file that cannot be
 * read or used.
 */
export function remoteTls(
  home: string,
  remote: RemoteApi,
  options: { readonly replace?: boolean } = {},
): { tls: TlsMaterial; fingerprint: string; selfSigned: boolean } {
  const files = remote.tls ?? {
    certFile: join(home, SELF_SIGNED_CERT_FILE),
    keyFile: join(home, SELF_SIGNED_KEY_FILE),
  };
  const selfSigned = remote.tls === undefined;
  if (
    selfSigned &&
    (options.replace === true || (!existsSync(files.certFile) && !existsSync(files.keyFile)))
  ) {
    const made = selfSignedCert({ commonName: 'heddle-controller', altIps: [remote.host] });
    writeFileAtomic(files.keyFile, made.key, { mode: 0o600 });
    writeFileAtomic(files.certFile, made.cert, { mode: 0o644 });
  }
  const read = (field: string, path: string): string => {
    try {
      return readTextBounded(path, MAX_PEM_BYTES);
    } catch (err) {
      throw inputOrSystemError(
        'tls_invalid',
        `api.remote.${field}: cannot read ${path}: ${errorMessage(err)}`,
        `api.remote.${field}`,
        err,
      );
    }
  };
  const tls = { cert: read('tls_cert_file', files.certFile), key: read('tls_key_file', files.keyFile) };
  let fingerprint: string;
  try {
    fingerprint = certFingerprint(tls.cert);
  } catch (err) {
    throw inputOrSystemError(
      'tls_invalid',
      `api.remote.tls_cert_file: ${files.certFile} is not a PEM certificate: ${errorMessage(err)}`,
      'api.remote.tls_cert_file',
      err,
    );
  }
  return { tls, fingerprint, selfSigned };
}
