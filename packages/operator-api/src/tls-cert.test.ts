import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpFailure, httpRequest } from './http-request.js';
import { certFingerprint, normaliseFingerprint, selfSignedCert } from './tls-cert.js';

describe('the self-signed certificate and the pinned client', () => {
  it('makes a certificate X509Certificate reads, self-signed, for the name and IP given', () => {
    const now = Date.UTC(2026, 0, 1);
    const m = selfSignedCert({ commonName: 'heddle-controller', altIps: ['127.0.0.2'], now, days: 30 });
    const x = new X509Certificate(m.cert);
    expect(x.subject).toBe('CN=heddle-controller');
    expect(x.issuer).toBe('CN=heddle-controller');
    expect(x.subjectAltName).toBe('IP Address:127.0.0.2');
    expect(x.verify(x.publicKey)).toBe(true);
    expect(new Date(x.validTo).getTime()).toBe(now + 30 * 86_400_000);
    const fp = certFingerprint(m.cert);
    expect(fp).toBe(`sha256:${x.fingerprint256.replace(/:/g, '').toLowerCase()}`);
    expect(normaliseFingerprint(x.fingerprint256)).toBe(fp);
    expect(normaliseFingerprint('sha256:xyz')).toBeUndefined();
  });

  it('sends the request only to the server whose certificate has the pinned fingerprint', async () => {
    const m = selfSignedCert({ commonName: 'heddle-controller', altIps: ['127.0.0.1'] });
    let requests = 0;
    const server = createServer({ cert: m.cert, key: m.key }, (_req, res) => {
      requests += 1;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/health`;
      const good = await httpRequest(url, {
        method: 'GET',
        headers: {},
        timeoutMs: 5000,
        fingerprint: certFingerprint(m.cert),
      });
      expect(await good.text()).toBe('ok');
      expect(requests).toBe(1);
      const other = certFingerprint(selfSignedCert({ commonName: 'x' }).cert);
      const err = await httpRequest(url, {
        method: 'POST',
        headers: {},
        body: '{}',
        timeoutMs: 5000,
        fingerprint: other,
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HttpFailure);
      expect((err as HttpFailure).code).toBe('fingerprint_mismatch');
      expect((err as HttpFailure).sent).toBe(false);
      expect((err as HttpFailure).presented).toBe(certFingerprint(m.cert));
      // Without a pin, the self-signed certificate fails the ordinary CA check.
      const unpinned = await httpRequest(url, { method: 'GET', headers: {}, timeoutMs: 5000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((unpinned as HttpFailure).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
      expect(requests).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
