import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson, startTestServer, type TestHandler, type TestSeedServer } from './client-fixture.js';
import { SeedError } from './errors.js';
import { SeedClient, type SeedClientOptions } from './seed-client.js';
import { type SelfSignedCert, selfSignedCert } from './test-tls.js';

const TOKEN = 'tok_Secret-Value.0123456789abcdefXYZ';
/** Every error provoked in this file; none may carry the token. */
const seen: unknown[] = [];

async function failure(p: Promise<unknown>): Promise<SeedError> {
  try {
    await p;
  } catch (err) {
    seen.push(err);
    expect(err).toBeInstanceOf(SeedError);
    const e = err as SeedError;
    expect(e.message).not.toContain(TOKEN);
    expect(String(e.stack)).not.toContain(TOKEN);
    expect(JSON.stringify(e)).not.toContain(TOKEN);
    return e;
  }
  throw new Error('expected a SeedError');
}

const routes: TestHandler = (_req, res, seenReq) => {
  const url = seenReq.url;
  const authed = seenReq.authorization === `Bearer ${TOKEN}`;
  if (url === '/api/v1/status') return sendJson(res, 200, { firmware: '1.4.2', uptime_secs: 12.5, cpu: 3 });
  if (url === '/api/v1/echo')
    return sendJson(res, 200, { firmware: TOKEN, uptime_secs: 1, [TOKEN]: [TOKEN] });
  if (url === '/api/v1/identity') return sendJson(res, 200, { device_id: 'seed-01', model: 'cognitum' });
  if (url === '/api/v1/apps') {
    if (!seenReq.authorization) return sendJson(res, 401, { error: 'no token' });
    if (!authed) return sendJson(res, 403, { error: `token ${seenReq.authorization} refused` });
    return sendJson(res, 200, {
      installed: [{ id: 'air-quality', version: '1.2.0', running: true, pid: 7 }],
    });
  }
  if (url === '/api/v1/apps/available') {
    return sendJson(res, 200, {
      cogs: [{ id: 'air-quality', version: '1.2.0', sha256: 'AB'.repeat(32), x: 1 }],
    });
  }
  if (url === '/api/v1/apps/thermal/start') return sendJson(res, 409, { error: `cap of 3 reached ${TOKEN}` });
  if (url === '/api/v1/apps/thermal/stop') return sendJson(res, 200, {});
  if (url === '/api/v1/apps/air-quality/logs?lines=5')
    return sendJson(res, 200, { output: ['a'], errors: [] });
  if (url === '/api/v1/apps/air-quality/console') {
    return sendJson(res, 200, { output: 'x\ny', errors: [], exit_code: 0 });
  }
  if (url === '/api/v1/apps/air-quality/config') return sendJson(res, 200, { rate: 5, name: 'n' });
  if (url === '/api/v1/moved') {
    res.writeHead(302, { location: 'https://evil.example/' });
    return res.end();
  }
  if (url === '/api/v1/garbage') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end('{"firmware": "1", uptime');
  }
  if (url === '/api/v1/huge') {
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const pump = (): void => {
      while (sent < 64 * 1024 * 1024 && !res.destroyed) {
        sent += 65536;
        if (!res.write(Buffer.alloc(65536, 0x20))) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => {
      hugeSent = sent;
    });
    return pump();
  }
  if (url === '/api/v1/huge-declared') {
    res.writeHead(200, { 'content-length': 2 * 1024 * 1024 });
    return res.end(Buffer.alloc(2 * 1024 * 1024, 0x20));
  }
  if (url === '/api/v1/hang') return; // never answers
  if (url === '/api/v1/oops') {
    res.writeHead(500);
    return res.end('<html>oops</html>');
  }
  sendJson(res, 404, { error: 'no such endpoint' });
};
let hugeSent = 0;

let certA: SelfSignedCert;
let certB: SelfSignedCert;
let tlsServer: TestSeedServer;
let plainServer: TestSeedServer;

beforeAll(async () => {
  certA = selfSignedCert('seed');
  certB = selfSignedCert('seed');
  tlsServer = await startTestServer(routes, certA);
  plainServer = await startTestServer(routes);
});
afterAll(async () => {
  await tlsServer.close();
  await plainServer.close();
  for (const e of seen) expect(`${String(e)} ${(e as Error).stack}`).not.toContain(TOKEN);
});

const pinned = (extra: Partial<SeedClientOptions> = {}): SeedClient =>
  new SeedClient({ url: tlsServer.url, spki: certA.spki, token: TOKEN, ...extra });

describe('SeedClient over pinned HTTPS', () => {
  it('talks to a Seed whose key matches the pin', async () => {
    const c = pinned();
    expect(c.url).toBe(tlsServer.url);
    expect(await c.status()).toEqual({ firmware: '1.4.2', uptime_secs: 12.5, cpu: 3 });
    expect(await c.identity()).toEqual({ device_id: 'seed-01', model: 'cognitum' });
    expect(await c.installed()).toEqual([{ id: 'air-quality', version: '1.2.0', running: true, pid: 7 }]);
    expect(await c.available()).toEqual([{ id: 'air-quality', version: '1.2.0', sha256: 'ab'.repeat(32) }]);
    expect(await c.logs('air-quality', 5)).toEqual({ output: ['a'], errors: [] });
    expect(await c.console('air-quality', 'read')).toEqual({ output: ['x', 'y'], errors: [], exit_code: 0 });
    expect(await c.getConfig('air-quality')).toEqual({ rate: 5, name: 'n' });
    await c.stop('thermal');
    const last = tlsServer.requests.at(-1);
    expect(last?.authorization).toBe(`Bearer ${TOKEN}`);
    for (const r of tlsServer.requests) expect(r.url).not.toContain(TOKEN);
  });

  it('redacts a token the Seed echoes back in an answer', async () => {
    const v = await pinned().request('GET', '/api/v1/echo');
    expect(JSON.stringify(v)).not.toContain(TOKEN);
    expect(v).toEqual({ firmware: '[redacted]', uptime_secs: 1, '[redacted]': ['[redacted]'] });
  });

  it('accepts the pin in upper case or with colons', async () => {
    const colon = certA.spki.toUpperCase().match(/../g)?.join(':') ?? '';
    expect((await pinned({ spki: colon }).status()).firmware).toBe('1.4.2');
  });

  it('refuses a swapped certificate before sending anything', async () => {
    const before = tlsServer.requests.length;
    const e = await failure(pinned({ spki: certB.spki }).installed());
    expect(e.code).toBe('tls_pin');
    expect(e.message).toContain(certA.spki);
    expect(e.message).toContain(certB.spki);
    expect(tlsServer.requests.length).toBe(before);
  });

  it('refuses a server that swapped its certificate under an old pin', async () => {
    const swapped = await startTestServer(routes, certB);
    try {
      const e = await failure(
        new SeedClient({ url: swapped.url, spki: certA.spki, token: TOKEN }).installed(),
      );
      expect(e.code).toBe('tls_pin');
      expect(swapped.connections).toBeGreaterThanOrEqual(1);
      expect(swapped.requests).toEqual([]);
    } finally {
      await swapped.close();
    }
  });

  it('maps 401 and 403 to not_paired, without echoing the token', async () => {
    const none = await failure(new SeedClient({ url: tlsServer.url, spki: certA.spki }).installed());
    expect([none.code, none.status]).toEqual(['not_paired', 401]);
    const wrong = await failure(pinned({ token: 'another-token-0000' }).installed());
    expect([wrong.code, wrong.status]).toEqual(['not_paired', 403]);
  });

  it('turns {error} bodies into seed_error with the Seed message (token redacted)', async () => {
    const e = await failure(pinned().start('thermal'));
    expect([e.code, e.status]).toEqual(['seed_error', 409]);
    expect(e.message).toContain('cap of 3 reached [redacted]');
    const nf = await failure(pinned().request('GET', '/api/v1/nothing'));
    expect([nf.code, nf.message]).toEqual(['seed_error', expect.stringContaining('no such endpoint')]);
  });

  it('refuses redirects, garbage, non-JSON errors and oversized answers with bad_answer', async () => {
    expect((await failure(pinned().request('GET', '/api/v1/moved'))).code).toBe('bad_answer');
    expect((await failure(pinned().request('GET', '/api/v1/garbage'))).code).toBe('bad_answer');
    expect((await failure(pinned().request('GET', '/api/v1/oops'))).code).toBe('bad_answer');
    expect((await failure(pinned().request('GET', '/api/v1/huge-declared'))).code).toBe('bad_answer');
    const before = process.memoryUsage().rss;
    const huge = await failure(pinned().request('GET', '/api/v1/huge'));
    expect(huge.code).toBe('bad_answer');
    expect(huge.message).toContain('larger than 1048576');
    await new Promise((r) => setTimeout(r, 100));
    expect(hugeSent).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('times out on a Seed that never answers', async () => {
    const t0 = Date.now();
    const e = await failure(pinned({ apiTimeoutMs: 300 }).request('GET', '/api/v1/hang'));
    expect(e.code).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('reports an unreachable Seed', async () => {
    const dead = await startTestServer(routes);
    const url = `https://127.0.0.1:${dead.port}`;
    await dead.close();
    const e = await failure(new SeedClient({ url, spki: certA.spki, token: TOKEN }).status());
    expect(e.code).toBe('unreachable');
  });
});

describe('SeedClient over plain HTTP', () => {
  it('refuses plain http to loopback without allowPlainHttp', () => {
    const e = (() => {
      try {
        new SeedClient({ url: plainServer.url, token: TOKEN });
      } catch (err) {
        return err as SeedError;
      }
      throw new Error('expected insecure');
    })();
    expect(e.code).toBe('insecure');
  });

  it('works on loopback with allowPlainHttp', async () => {
    const c = new SeedClient({ url: plainServer.url, token: TOKEN, allowPlainHttp: true });
    expect((await c.installed())[0]?.id).toBe('air-quality');
  });

  it('refuses plain http to any other address, even when allowed', () => {
    for (const url of [
      'http://10.0.0.5:80',
      'http://seed.local',
      'http://169.254.42.2',
      'http://[fe80::1]',
    ]) {
      expect(() => new SeedClient({ url, allowPlainHttp: true })).toThrow(
        expect.objectContaining({ code: 'insecure' }),
      );
    }
    expect(new SeedClient({ url: 'http://169.254.42.1', allowPlainHttp: true }).url).toBe(
      'http://169.254.42.1:80',
    );
  });
});

describe('SeedClient argument checks', () => {
  const c = (): SeedClient => pinned();
  it('refuses bad ids, paths, lines, commands and configs with invalid_argument', async () => {
    const bad: Promise<unknown>[] = [
      c().start('../etc'),
      c().start('Air'),
      c().stop(''),
      c().uninstall('a/b'),
      c().install('x'.repeat(65)),
      c().logs('ok', 0),
      c().logs('ok', 1.5),
      c().console('ok', ''),
      c().setConfig('ok', { nested: { a: 1 } } as never),
      c().request('GET', '/etc/passwd'),
      c().request('GET', '/api/v1/../admin'),
      c().request('GET', '/api/v1/%2e%2e/admin'),
      c().request('GET', '/api/v1/a%2fb'),
      c().request('GET', '/api/v2/status'),
      c().request('GET', 'https://evil.example/api/v1/status'),
      c().request('TRACE' as never, '/api/v1/status'),
      c().pair(''),
    ];
    const before = tlsServer.requests.length;
    for (const p of bad) expect((await failure(p)).code).toBe('invalid_argument');
    expect(tlsServer.requests.length).toBe(before);
  });

  it('refuses bad options', () => {
    const opts: SeedClientOptions[] = [
      { url: 'https://127.0.0.1:8443' },
      { url: 'https://127.0.0.1:8443', spki: 'abc' },
      { url: 'ftp://127.0.0.1', spki: certA.spki },
      { url: 'https://user:pw@127.0.0.1', spki: certA.spki },
      { url: 'https://127.0.0.1/api', spki: certA.spki },
      { url: 'not a url', spki: certA.spki },
      { url: 'https://127.0.0.1', spki: certA.spki, token: 'has space in it' },
      { url: 'https://127.0.0.1', spki: certA.spki, apiTimeoutMs: -1 },
    ];
    for (const o of opts) {
      let err: unknown;
      try {
        new SeedClient(o);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SeedError);
      expect((err as SeedError).code).toBe('invalid_argument');
    }
    expect(new SeedClient({ url: 'https://10.1.2.3', spki: certA.spki }).url).toBe('https://10.1.2.3:8443');
  });
});
