import { connect } from 'node:tls';
import { errnoCode } from '@heddle/cli-kit';
import { SeedError, spkiSha256 } from '@heddle/seed-adapter';

/** How long `init` waits for the Seed's TLS handshake when it shows the certificate's SPKI. */
export const PEER_SPKI_TIMEOUT_MS = 5000;

/**
 * Connects once to an `https://` URL WITHOUT trusting it, only to read the certificate the server
 * presents, and returns its SPKI SHA-256 (hex) with the certificate's subject and validity. Nothing is
 * sent after the handshake. Used by `init` to show the operator what to pin; trust is never implied
 * by it. Rejects with `SeedError` `unreachable` or `timeout`.
 */
export function peerSpki(
  url: URL,
  timeoutMs = PEER_SPKI_TIMEOUT_MS,
): Promise<{ spki: string; subject: string; validTo: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? 8443 : Number(url.port); // the Seed's HTTPS port
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      // Only to read the certificate: nothing is trusted or sent on this connection.
      rejectUnauthorized: false,
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SeedError('timeout', `no TLS handshake from ${url.host} in ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = socket.getPeerCertificate();
      socket.destroy();
      if (cert === null || cert.raw === undefined) {
        reject(new SeedError('bad_answer', `${url.host} presented no certificate`));
        return;
      }
      const cn = cert.subject?.CN;
      resolve({
        spki: spkiSha256(cert.raw),
        subject: Array.isArray(cn) ? cn.join(',') : (cn ?? ''),
        validTo: cert.valid_to ?? '',
      });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new SeedError('unreachable', `cannot reach ${url.host}: ${errnoCode(err) ?? err.message}`));
    });
  });
}
