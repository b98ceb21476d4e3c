import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { runCaptured as capture } from '@heddle/cli-kit/testing';
import { ApiInfoSchema, routePath } from '@heddle/operator-api';
import { PLACE_PATH } from '@heddle/operator-api/http';
import { afterEach, describe, expect, it } from 'vitest';
import { place } from './commands/place.js';
import type { CliIo } from './io.js';
import { daemonUrl, placeEarly } from './place-early.js';
import { runCaptured, tempDir } from './test-io.js';

// `heddle place` sends its order before it loads the validating client (place-early.ts); the command
// then reads that answer. Everything it prints and exits with must be what it does without the early
// send, which `place(args, io)` called directly still does.

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A stand-in controller: records each request and answers it with `answer`. */
async function standIn(
  seen: Seen[],
  answer: (res: ServerResponse, req: IncomingMessage) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      answer(res, req);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** An io of `cwd` (and `env`, default the process's) whose output goes nowhere. */
const ioOf = (cwd: string, env?: Record<string, string>): CliIo => ({
  cwd,
  out: () => {},
  err: () => {},
  ...(env === undefined ? {} : { env }),
});

function home(url: string): { cwd: string; home: string } {
  const cwd = tempDir();
  const h = join(cwd, 'home');
  mkdirSync(h);
  writeFileSync(join(h, 'api.json'), JSON.stringify({ url, pid: process.pid, node_id: 'ab'.repeat(16) }));
  writeFileSync(join(h, 'api.token'), 'token\n');
  mkdirSync(join(cwd, 'pkg'));
  return { cwd, home: h };
}

const refuse = (res: ServerResponse): void => {
  res.writeHead(422, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        code: 'unplaceable',
        message: 'no node fits',
        reasons: { ['ab'.repeat(16)]: 'memory: 4 MB > 0' },
      },
    }),
  );
};

/** The same command run with the early send (the CLI) and without it (the command alone). */
async function both(args: readonly string[], cwd: string) {
  const early = await runCaptured(args, cwd);
  const without = await capture((argv, io) => place(argv, io), args.slice(1), { cwd });
  const scrub = (t: string): string => t.replace(/cli-[0-9a-f]{24}/g, 'cli-KEY');
  return {
    early: { code: early.code, out: scrub(early.out), err: scrub(early.err) },
    without: { code: without.code, out: scrub(without.out), err: scrub(without.err) },
  };
}

describe('heddle place sends its order first', () => {
  it('sends the same request the client sends, before the client is loaded', async () => {
    const seen: Seen[] = [];
    const { cwd, home: h } = home(await standIn(seen, refuse));
    const io = ioOf(cwd);
    const args = ['pkg', '--home', h, '--mode', 'listener', '--set', 'n=1', '--json'];
    const early = placeEarly(args, io);
    expect(early).toBeDefined();
    const res = await early?.sent;
    expect(res?.status).toBe(422); // answered without ApiClient
    await place(args, io); // the command alone, through ApiClient.place
    expect(seen).toHaveLength(2);
    const [a, b] = seen as [Seen, Seen];
    expect(a.method).toBe(b.method);
    expect(a.url).toBe(b.url);
    expect(a.url).toBe(routePath('place'));
    for (const name of ['authorization', 'accept', 'content-type', 'content-length']) {
      expect(a.headers[name], name).toBe(b.headers[name]);
    }
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const key = /cli-[0-9a-f]{24}/g;
    expect(a.body.replace(key, 'K')).toBe(b.body.replace(key, 'K'));
    expect(JSON.parse(a.body)).toMatchObject({
      package_dir: join(cwd, 'pkg'),
      mode: { type: 'listener' },
      values: { n: 1 },
    });
  });

  it('prints and exits exactly as without it: a refusal, a broken answer, a reset, no controller', async () => {
    const seen: Seen[] = [];
    const cases: ((res: ServerResponse, req: IncomingMessage) => void)[] = [
      refuse,
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"placed"}'); // breaks the answer schema: bad_answer
      },
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('not json');
      },
      (_res, req) => req.socket.destroy(), // sent, no answer: outcome_unknown
    ];
    for (const answer of cases) {
      const { cwd, home: h } = home(await standIn(seen, answer));
      for (const extra of [['--json'], []]) {
        const r = await both(['place', 'pkg', '--home', h, ...extra], cwd);
        expect(r.early).toEqual(r.without);
        expect(r.early.code).not.toBe(0);
      }
    }
    // No controller at the address: nothing answers at all.
    const { cwd, home: h } = home('http://127.0.0.1:1');
    const r = await both(['place', 'pkg', '--home', h, '--json'], cwd);
    expect(r.early).toEqual(r.without);
    expect(JSON.parse(r.early.err).error.code).toBe('controller_not_running');
  });

  it('sends nothing early when anything is unusual (the command then does everything)', async () => {
    const seen: Seen[] = [];
    const { cwd, home: h } = home(await standIn(seen, refuse));
    const io = ioOf(cwd, {});
    for (const extra of [
      ['--wait'],
      ['--idempotency-key', 'k1'],
      ['--request-id', 'r1'],
      ['--constraint', 'zone=a'],
      ['--spread', 'zone'],
      ['--mode', 'never'], // does not build an order
      ['--no-such-flag'],
    ]) {
      expect(placeEarly(['pkg', '--home', h, ...extra], io), extra.join(' ')).toBeUndefined();
    }
    // A controller named by the environment or a context, not by a home.
    expect(placeEarly(['pkg'], ioOf(cwd, { HEDDLE_ADDR: 'http://127.0.0.1:9' }))).toBeUndefined();
    expect(placeEarly(['pkg'], ioOf(cwd, {}))).toBeUndefined();
    // $HEDDLE_HOME alone is a home.
    expect(placeEarly(['pkg'], ioOf(cwd, { HEDDLE_HOME: h }))).toBeDefined();
    // A home with no running daemon, or an api.json the client would refuse.
    writeFileSync(
      join(h, 'api.json'),
      JSON.stringify({ url: 'http://localhost:1', pid: 1, node_id: 'ab'.repeat(16) }),
    );
    expect(placeEarly(['pkg', '--home', h], io)).toBeUndefined();
    expect(placeEarly(['pkg', '--home', join(cwd, 'nowhere')], io)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toHaveLength(1); // only the $HEDDLE_HOME one was sent
  });

  it('reads api.json exactly as the client does (ApiInfoSchema)', () => {
    const ok = { url: 'http://127.0.0.1:8080', pid: 12, node_id: 'ab'.repeat(16) };
    const remote = { url: 'https://ctl.example:7443', fingerprint: `sha256:${'c'.repeat(64)}` };
    const variants: unknown[] = [
      ok,
      { ...ok, remote },
      { ...ok, extra: 1 },
      { ...ok, url: 'http://localhost:8080' },
      { ...ok, url: 'http://127.0.0.1:123456' },
      { ...ok, pid: 0 },
      { ...ok, pid: 1.5 },
      { ...ok, pid: '12' },
      { ...ok, node_id: 'AB'.repeat(16) },
      { ...ok, node_id: 'ab' },
      { ...ok, remote: { ...remote, more: true } },
      { ...ok, remote: { ...remote, url: 'http://ctl.example' } },
      { ...ok, remote: { ...remote, fingerprint: 'sha256:00' } },
      { ...ok, remote: null },
      { url: ok.url, pid: ok.pid },
      [],
      null,
      'text',
    ];
    for (const v of variants) {
      const accepted = ApiInfoSchema.safeParse(v).success;
      expect(daemonUrl(JSON.stringify(v)) !== undefined, JSON.stringify(v)).toBe(accepted);
    }
    expect(daemonUrl('{')).toBeUndefined();
    expect(PLACE_PATH).toBe(routePath('place'));
  });
});
