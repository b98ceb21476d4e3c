import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CogConfigSchema,
  CogLogsSchema,
  CogManifestSchema,
  ConsoleResultSchema,
  InstallAnswerSchema,
  InstalledListSchema,
  PairAnswerSchema,
  PairStatusSchema,
  SeedErrorBodySchema,
  SeedIdentitySchema,
  SeedStatusSchema,
  StoreListSchema,
} from './api-schemas.js';
import { startTestServer, type TestSeedServer } from './client-fixture.js';
import { SeedError } from './errors.js';
import { SeedClient } from './seed-client.js';

const TOKEN = 'prop-token_SECRET_0123456789';
let reply: { status: number; body: Buffer } = { status: 200, body: Buffer.from('{}') };
let server: TestSeedServer;

beforeAll(async () => {
  server = await startTestServer((_req, res) => {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(reply.body);
  });
});
afterAll(() => server.close());

/** Bodies near the documented shapes, plus junk; some carry the token. */
const jsonish = fc.oneof(
  fc.jsonValue(),
  fc.record({ error: fc.oneof(fc.string(), fc.constant(`bad ${TOKEN}`), fc.string({ minLength: 600 })) }),
  fc.record({ firmware: fc.string(), uptime_secs: fc.double(), extra: fc.jsonValue() }, { requiredKeys: [] }),
  fc.record({ device_id: fc.string(), model: fc.string(), [TOKEN]: fc.string() }, { requiredKeys: [] }),
  fc.record({
    installed: fc.array(
      fc.record({
        id: fc.string(),
        version: fc.string(),
        running: fc.boolean(),
        pid: fc.option(fc.integer()),
      }),
    ),
  }),
  fc.record({ cogs: fc.array(fc.record({ id: fc.constantFrom('a', 'b.c', 'X'), version: fc.string() })) }),
  fc.record({ output: fc.oneof(fc.string(), fc.array(fc.string())), errors: fc.array(fc.string()) }),
  fc.record({ token: fc.oneof(fc.string(), fc.constant(TOKEN)) }),
  fc.dictionary(
    fc.string(),
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.object()),
  ),
);
const body = fc.oneof(
  jsonish.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  fc.string().map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  jsonish.map((v) => Buffer.from(`${JSON.stringify(v)}${TOKEN}`)),
);
const status = fc.constantFrom(200, 201, 204, 400, 401, 403, 404, 409, 413, 500, 503);
const calls: readonly ((c: SeedClient) => Promise<unknown>)[] = [
  (c) => c.status(),
  (c) => c.identity(),
  (c) => c.pairStatus(),
  (c) => c.openPairWindow(),
  (c) => c.pair('heddle'),
  (c) => c.available(),
  (c) => c.installed(),
  (c) => c.start('cog'),
  (c) => c.logs('cog', 10),
  (c) => c.console('cog', 'read'),
  (c) => c.getConfig('cog'),
];
const ALLOWED = new Set(['bad_answer', 'seed_error', 'not_paired']);

describe('response parsing on junk answers', () => {
  it('either returns a value or refuses with a bounded SeedError that never carries the token', async () => {
    const client = new SeedClient({ url: server.url, token: TOKEN, allowPlainHttp: true });
    await fc.assert(
      fc.asyncProperty(status, body, fc.nat(calls.length - 1), async (st, b, which) => {
        reply = { status: st, body: b };
        const call = calls[which];
        if (call === undefined) return;
        try {
          const value = await call(client);
          expect(st >= 200 && st < 300).toBe(true);
          if (which !== 4) expect(JSON.stringify(value ?? null)).not.toContain(TOKEN);
        } catch (err) {
          expect(err).toBeInstanceOf(SeedError);
          const e = err as SeedError;
          expect(ALLOWED.has(e.code)).toBe(true);
          expect(e.message).not.toContain(TOKEN);
          expect(e.message.length).toBeLessThan(1200);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('schemas never throw on any JSON value, and bound extras', () => {
    const schemas = [
      SeedStatusSchema,
      SeedIdentitySchema,
      PairStatusSchema,
      PairAnswerSchema,
      InstalledListSchema,
      InstallAnswerSchema,
      StoreListSchema,
      CogLogsSchema,
      ConsoleResultSchema,
      CogManifestSchema,
      CogConfigSchema,
      SeedErrorBodySchema,
    ];
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        for (const s of schemas) s.safeParse(v);
      }),
    );
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const parsed = SeedStatusSchema.parse({ device_id: 'd', uptime_secs: 1, ...many, big: 'x'.repeat(5000) });
    expect(Object.keys(parsed).length).toBe(34);
    expect(parsed.big).toBeUndefined();
    const err = SeedErrorBodySchema.parse({ error: `a\u0000b${'z'.repeat(1000)}` });
    expect(err.error.length).toBeLessThanOrEqual(515);
    expect(err.error.startsWith('a b')).toBe(true);
  });
});

describe('the installed list is read leniently (its shape is only known from mocks)', () => {
  it('reads an entry without `running` (or with a running of another type) from its pid', () => {
    const list = InstalledListSchema.parse({
      installed: [
        { id: 'fall-detect', version: '1.0.0', pid: 4242, has_binary: true },
        { id: 'baby-cry', version: '1.0.0', pid: null },
        { id: 'thermal', version: '1.0.3' },
        { id: 'presence', version: '2.0.0', running: 'yes', pid: 7 },
        { id: 'vibration', version: '0.4.1', running: false, pid: 9 },
      ],
      count: 5,
    });
    expect(list.installed.map((c) => [c.id, c.running])).toEqual([
      ['fall-detect', true],
      ['baby-cry', false],
      ['thermal', false],
      ['presence', true],
      ['vibration', false],
    ]);
  });
});
