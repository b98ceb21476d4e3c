// Bad input and attacks against a real `heddle-host` daemon in a child process (issue 6): every
// refusal code end to end, forged and stale requests, bad packages, a malicious controller, hostile
// frames and connections. After each, the daemon is still up and answers.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import {
  blake3Hex,
  canonicalJson,
  type JsonValue,
  type KeyPair,
  keyPairFromSecret,
  nodeIdFromPublicKey,
  toHex,
} from '@heddle/envelope';
import { type PieceMapJson, RevocationList } from '@heddle/package';
import type { SignedCtl } from '@heddle/protocol';
import { DirPackageSource, type PackageSource } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Daemon, kill, spawnHost, waitFor } from './daemon-fixtures.js';
import {
  HELLO,
  NATIVE,
  placeBody,
  TestController,
  uniquePackage as uniqueBuilt,
  WASI,
} from './test-controller.js';
import { runCaptured, tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x61));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x62));
const publisher2 = keyPairFromSecret(new Uint8Array(32).fill(0x63));
const operator = keyPairFromSecret(new Uint8Array(32).fill(0x64));
const stranger = keyPairFromSecret(new Uint8Array(32).fill(0x65));
const _CONTROLLER_ID = nodeIdFromPublicKey(controller.publicKey);

const cwd = tempDir();
const home = join(cwd, 'heddle-host');
let daemon: Daemon;
let url = '';
let hostId = '';
let hostKey = new Uint8Array();
let config: Record<string, unknown> = {};

/** Permits everything but starting a workload with more than LAN network (so native starts are denied). */
const POLICY = {
  version: 1,
  name: 'attack-test',
  rules: [
    {
      id: 'manage',
      effect: 'permit',
      actions: ['workload.load', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
    { id: 'start-lan', effect: 'permit', actions: ['workload.start'], kinds: ['cog'], max_network: 'lan' },
  ],
};

beforeAll(async () => {
  writeFileSync(
    join(cwd, 'trust.json'),
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [
        { id: 'publisher', role: 'publisher', public_key: toHex(publisher.publicKey) },
        { id: 'publisher2', role: 'publisher', public_key: toHex(publisher2.publicKey) },
        { id: 'operator', role: 'operator', public_key: toHex(operator.publicKey) },
      ],
    }),
  );
  const init = await runCaptured(
    [
      'init',
      '--listen',
      '127.0.0.1:0',
      '--controller',
      toHex(controller.publicKey),
      '--trust',
      'trust.json',
      '--json',
    ],
    cwd,
  );
  expect(init.code, init.err).toBe(0);
  const path = join(home, 'heddle-host.json');
  config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(join(home, 'policy.json'), JSON.stringify(POLICY));
  writeFileSync(
    path,
    JSON.stringify({
      ...config,
      policy_file: 'policy.json',
      routes: ['native', 'wasi'],
      limits: { handshake_timeout_ms: 1000, idle_timeout_ms: 3000 },
      revocation_check_secs: 1,
      native: process.getuid?.() === 0 ? { run_as_user: 'nobody' } : { allow_host_user: true },
    }),
  );
  daemon = spawnHost(['run'], cwd);
  const listening = await waitFor(daemon, 'listening');
  url = listening.url as string;
  hostId = listening.node_id as string;
  hostKey = Buffer.from(listening.public_key as string, 'hex');
  ctl.url = url;
  ctl.hostId = hostId;
  ctl.hostKey = hostKey;
}, 60_000);

afterAll(async () => {
  await kill(daemon);
});

// ---- helpers -------------------------------------------------------------------------------------

const ctl = new TestController(controller);
const request: TestController['request'] = (...a) => ctl.request(...a);
const crafted: TestController['crafted'] = (...a) => ctl.crafted(...a);
const send: TestController['send'] = (...a) => ctl.send(...a);
const refused: TestController['refused'] = (...a) => ctl.refused(...a);
const uniquePackage = (keys: KeyPair = publisher, src = HELLO) => uniqueBuilt(keys, src);

async function stillUp(): Promise<void> {
  expect(daemon.proc.exitCode).toBeNull();
  const r = await send(request('workload.describe'));
  expect(r.response.responder).toBe(hostId);
}

const chainText = (): string => readFileSync(join(home, 'data', 'chain.jsonl'), 'utf8');

// ---- the tests -----------------------------------------------------------------------------------

describe('forged, stale and misaddressed requests (unauthenticated: one signed refusal each)', () => {
  it.each([
    ['signature', () => ({ ...request('workload.status'), signature: '0'.repeat(128) })],
    ['signature', () => crafted({ requester: nodeIdFromPublicKey(stranger.publicKey) })],
    ['expired', () => request('workload.status', {}, { now: Date.now() - 400_000 })],
    ['expired', () => request('workload.status', {}, { now: Date.now() + 60_000 })],
    ['not_for_me', () => request('workload.status', {}, { target: 'f'.repeat(32) })],
    ['not_for_me', () => crafted({ target: '*' })],
    ['unauthorized', () => request('workload.status', {}, { keys: stranger })],
    ['invalid_request', () => crafted({ expires_at_ms: Date.now() + 400_000 })],
    ['invalid_request', () => crafted({ version: 2 })],
    ['invalid_request', () => crafted({ method: 'workload.stop', body: { instance_id: 'x' } })],
  ])('%s', async (code, make) => {
    const r = await refused(make() as SignedCtl);
    expect(r.code).toBe(code);
  });

  // Requests a well-behaved client library will not even send: over a raw socket.
  it.each([
    ['unknown_method', 'workload.reboot', () => crafted({ method: 'workload.reboot' })],
    ['invalid_request', 'workload.status', () => crafted({ nonce: 'not-a-nonce' })],
  ])('%s (raw frame)', async (code, method, make) => {
    const ws = await new Promise<InstanceType<typeof WebSocket>>((ok, fail) => {
      const socket = new WebSocket(url, { perMessageDeflate: false });
      socket.once('open', () => ok(socket));
      socket.once('error', fail);
    });
    const frames: string[] = [];
    ws.on('message', (d) => frames.push(String(d)));
    const closedWith = new Promise<number>((ok) => ws.once('close', (c) => ok(c)));
    ws.send(JSON.stringify({ t: 'call', id: 7, method, signed: make() }));
    expect(await closedWith).toBe(1008);
    const result = JSON.parse(frames[0] ?? '{}') as { t: string; signed: SignedCtl };
    expect(result.t).toBe('result');
    expect(result.signed.public_key).toBe(toHex(hostKey));
    const outcome = (JSON.parse(result.signed.payload) as { outcome: { code: string; reason: string } })
      .outcome;
    expect(outcome.code).toBe(code);
    expect(outcome.reason.length).toBeGreaterThan(10);
    await stillUp();
  });

  it('replay: the same signed request twice is refused the second time', async () => {
    const signed = request('workload.status');
    await send(signed);
    expect((await refused(signed)).code).toBe('replay');
    await stillUp();
  });
});

describe('refusals of verified requests', () => {
  it('invalid_request names the field; unknown_instance; admission for a route it does not run', async () => {
    const bad = await refused(request('workload.place', { ...placeBody('0'.repeat(64)), variant: 'x' }));
    expect(bad).toMatchObject({ code: 'invalid_request', reason: expect.stringContaining('body.variant') });
    const unknown = await refused(request('workload.stop', { instance_id: `hello-cog-${'0'.repeat(16)}` }));
    expect(unknown.code).toBe('unknown_instance');
    const pkg = await uniquePackage();
    const source = DirPackageSource.open(pkg.dir);
    const container = await refused(
      request('workload.place', placeBody(pkg.manifestHash, 'x86_64-container')),
      source,
    );
    expect(container).toMatchObject({
      code: 'admission',
      reason: expect.stringContaining('no container adapter'),
    });
    await source.close();
  });

  it('fetch: the controller offers nothing to fetch', async () => {
    const pkg = await uniquePackage();
    const r = await refused(request('workload.place', placeBody(pkg.manifestHash)));
    expect(r).toMatchObject({ code: 'fetch', reason: expect.stringContaining('not_offered') });
  });

  it('governance: the policy does not let a native (egress) workload start; the load is rolled back', async () => {
    const pkg = await uniquePackage();
    const source = DirPackageSource.open(pkg.dir);
    const r = await refused(
      request('workload.place', placeBody(pkg.manifestHash, NATIVE, { start: true })),
      source,
    );
    await source.close();
    expect(r.code).toBe('governance');
    expect(r.reason).toMatch(/start failed: .*unloaded/);
    const status = await send(request('workload.status', {}));
    expect((status.result as { instances: unknown[] }).instances).toEqual([]);
  });

  it('runtime: unloading a running instance; then a WASI cog is placed, started, logged, stopped and unloaded', async () => {
    const pkg = await uniquePackage(publisher, WASI);
    const source = DirPackageSource.open(pkg.dir);
    const placed = await send(
      request(
        'workload.place',
        placeBody(pkg.manifestHash, 'wasm32-wasi', {
          start: true,
          config: { mode: { type: 'interval', secs: 60 } },
        }),
      ),
      source,
    );
    await source.close();
    const id = (placed.result as { instance_id: string }).instance_id;
    expect(placed.result).toMatchObject({ started: true, route: 'wasi' });
    const r = await refused(request('workload.unload', { instance_id: id }));
    expect(r).toMatchObject({ code: 'runtime', reason: expect.stringContaining('stop it first') });
    let lines: string[] = [];
    for (let i = 0; i < 100 && lines.length === 0; i++) {
      lines = ((await send(request('workload.logs', { instance_id: id }))).result as { lines: string[] })
        .lines;
      if (lines.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lines.join('\n')).toContain('wasi-cog');
    await send(request('workload.stop', { instance_id: id, grace_ms: 500 }));
    await send(request('workload.unload', { instance_id: id }));
    const text = chainText();
    for (const kind of [
      'workload.place',
      'workload.start',
      'workload.stop',
      'workload.unload',
      'workload.refuse',
    ]) {
      expect(text).toContain(`"${kind}"`);
    }
  });
});

describe('bad packages', () => {
  it('verify: a file changed after signing', async () => {
    const pkg = await uniquePackage();
    writeFileSync(join(pkg.dir, 'bin', 'hello.sh'), '#!/bin/sh\necho pwned\n');
    const source = DirPackageSource.open(pkg.dir);
    expect((await refused(request('workload.place', placeBody(pkg.manifestHash)), source)).code).toBe(
      'verify',
    );
    await source.close();
  });

  it('verify: signed by a key this host does not pin, refused before any file is transferred', async () => {
    const pkg = await uniquePackage(stranger);
    let maps = 0;
    const source = malicious(pkg.dir, {
      map: (path, src) => {
        maps++;
        return src.pieceMap(path);
      },
    });
    const r = await refused(request('workload.place', placeBody(pkg.manifestHash)), source);
    await source.close();
    expect(r).toMatchObject({ code: 'verify', reason: expect.stringContaining('untrusted_signer') });
    expect(maps).toBe(0);
  });

  it('verify: a revoked signer, once the operator-signed list reaches the host', async () => {
    const pkg = await uniquePackage(publisher2);
    RevocationList.empty()
      .add(
        { kind: 'signer', ref: toHex(publisher2.publicKey), revokedAtMs: Date.now(), reason: 'leaked' },
        operator,
      )
      .save(resolve(home, config.revocation_list as string), { generationFile: false });
    daemon.proc.kill('SIGHUP');
    await waitFor(daemon, 'revocation list changed', 5_000);
    const source = DirPackageSource.open(pkg.dir);
    const r = await refused(request('workload.place', placeBody(pkg.manifestHash)), source);
    await source.close();
    expect(r).toMatchObject({ code: 'verify', reason: expect.stringContaining('revoked') });
  });
});

/** A source that serves `dir` but changes what `change` says. */
function malicious(
  dir: string,
  change: {
    piece?: (path: string, index: number, bytes: Uint8Array) => Uint8Array;
    map?: (path: string, src: DirPackageSource) => Promise<PieceMapJson>;
  },
): PackageSource & { close(): Promise<void> } {
  const src = DirPackageSource.open(dir);
  return {
    manifestHash: src.manifestHash,
    manifest: () => src.manifest(),
    pieceMap: (path) => (change.map === undefined ? src.pieceMap(path) : change.map(path, src)),
    piece: async (path, index) => {
      const bytes = await src.piece(path, index);
      return change.piece === undefined ? bytes : change.piece(path, index, bytes);
    },
    close: () => src.close(),
  };
}

describe('a malicious controller', () => {
  it('a corrupted piece is rejected at that piece, and recorded', async () => {
    const pkg = await uniquePackage();
    const source = malicious(pkg.dir, {
      piece: (_p, _i, bytes) => {
        const copy = Uint8Array.from(bytes);
        copy[0] = (copy[0] ?? 0) ^ 0xff;
        return copy;
      },
    });
    const r = await refused(request('workload.place', placeBody(pkg.manifestHash)), source);
    await source.close();
    expect(r).toMatchObject({ code: 'verify', reason: expect.stringMatching(/piece_rejected: .* piece 0/) });
    expect(chainText()).toContain('"artifact.piece_rejected"');
  });

  it('a wrong file (another file’s piece map) is refused', async () => {
    const pkg = await uniquePackage();
    const envelope = JSON.parse(readFileSync(join(pkg.dir, 'heddle-package.json'), 'utf8')) as {
      body: { files: { path: string }[] };
    };
    const [a, b] = envelope.body.files.map((f) => f.path) as [string, string];
    const source = malicious(pkg.dir, { map: async (path, src) => src.pieceMap(path === a ? b : a) });
    const r = await refused(request('workload.place', placeBody(pkg.manifestHash)), source);
    await source.close();
    expect(r).toMatchObject({ code: 'verify', reason: expect.stringContaining('artifact_mismatch') });
  });

  it('a 10 GB file claim is refused before anything is fetched', async () => {
    const pkg = await uniquePackage();
    const envelope = JSON.parse(readFileSync(join(pkg.dir, 'heddle-package.json'), 'utf8')) as {
      body: { files: { size: number }[] };
    };
    (envelope.body.files[0] as { size: number }).size = 10 * 1024 ** 3;
    const bytes = new TextEncoder().encode(`${canonicalJson(envelope as unknown as JsonValue)}\n`);
    const manifestHash = blake3Hex(bytes);
    let pieces = 0;
    const source: PackageSource = {
      manifestHash,
      manifest: async () => bytes,
      pieceMap: async () => {
        pieces++;
        throw new Error('never asked');
      },
      piece: async () => {
        pieces++;
        throw new Error('never asked');
      },
    };
    const r = await refused(request('workload.place', placeBody(manifestHash)), source);
    expect(r).toMatchObject({ code: 'fetch', reason: expect.stringContaining('too_large') });
    expect(pieces).toBe(0);
  });
});

describe('hostile frames and connections', () => {
  const rss = (): number => {
    const status = readFileSync(`/proc/${daemon.proc.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  };

  const rawSocket = (): Promise<InstanceType<typeof WebSocket>> =>
    new Promise((ok, fail) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once('open', () => ok(ws));
      ws.once('error', fail);
    });

  const closed = (ws: InstanceType<typeof WebSocket>): Promise<{ code: number; frames: string[] }> =>
    new Promise((ok) => {
      const frames: string[] = [];
      ws.on('message', (d) => frames.push(String(d)));
      ws.once('close', (code) => ok({ code, frames }));
    });

  it('an oversized frame closes that connection with 1009', async () => {
    const ws = await rawSocket();
    const done = closed(ws);
    ws.send('x'.repeat(2 * 1024 * 1024));
    expect((await done).code).toBe(1009);
    await stillUp();
  });

  it('malformed JSON gets an error frame naming it, then close 4001', async () => {
    const ws = await rawSocket();
    const done = closed(ws);
    ws.send('{"t":"call","id":1,');
    const { code, frames } = await done;
    expect(code).toBe(4001);
    expect(JSON.parse(frames[0] ?? '{}')).toMatchObject({ t: 'error', code: 'malformed_frame' });
    await stillUp();
  });

  it('a slow client dripping its upgrade request is dropped at the handshake deadline (slowloris)', async () => {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    const t0 = Date.now();
    const drip = setInterval(() => socket.write('X'), 100);
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nX-Slow: ');
    await new Promise<void>((ok) => socket.once('close', () => ok()));
    clearInterval(drip);
    expect(Date.now() - t0).toBeLessThan(4000);
    await stillUp();
  });

  it('1,000 garbage connections in a row: the daemon stays up and its memory stays bounded', async () => {
    const { port } = new URL(url);
    const before = rss();
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from(
          { length: 50 },
          (_, i) =>
            new Promise<void>((ok) => {
              const s = connect(Number(port), '127.0.0.1');
              s.on('error', () => ok());
              s.on('close', () => ok());
              s.on('connect', () => {
                const junk = crypto.getRandomValues(new Uint8Array(64 + ((batch * 50 + i) % 512)));
                s.end(Buffer.from(junk));
              });
            }),
        ),
      );
    }
    await stillUp();
    expect(rss() - before).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});
