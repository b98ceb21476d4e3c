import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3, keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { NO_REVOCATIONS, TrustAnchors, verifyPackage } from '@heddle/package';
import {
  AllowListPolicy,
  createRequest,
  NonceGuard,
  okOutcome,
  Refusal,
  signRequest,
  signResponse,
  verifyRequest,
  verifyResponse,
} from '@heddle/protocol';
import { DirPackageSource, WireServer, WireSession } from '@heddle/wire';
import { buildBigPackage } from './big-package.mjs';
import { report } from './harness.mjs';

// `ws` is a dependency of @heddle/wire, not of the workspace root: load the same copy the wire uses.
const { WebSocket, WebSocketServer } = createRequire(import.meta.resolve('@heddle/wire'))('ws');

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x11));
const host = keyPairFromSecret(new Uint8Array(32).fill(0x22));
const CONTROLLER_ID = nodeIdFromPublicKey(controller.publicKey);
const HOST_ID = nodeIdFromPublicKey(host.publicKey);
const DECISION = 'd1'.repeat(32);
const CONCURRENCY = 16;
const DURATION_MS = 2000;

function signedRequest(method = 'workload.status', body = { n: 1 }) {
  const mutating = method !== 'workload.status';
  const request = createRequest({
    method,
    requester: CONTROLLER_ID,
    target: HOST_ID,
    body,
    now: Date.now(),
    ...(mutating ? { decisionId: DECISION } : {}),
  });
  return signRequest(request, controller);
}

function hostHandler(act = async (body) => body) {
  const nonces = new NonceGuard({ capacity: 1 << 20 });
  const policy = new AllowListPolicy({ nodeIds: [CONTROLLER_ID] });
  return async (signed, ctx) => {
    const { request } = verifyRequest(signed, {
      nodeId: HOST_ID,
      now: Date.now(),
      policy,
      nonces,
      expectedMethod: ctx.method,
    });
    try {
      return signResponse(request, okOutcome(await act(request.body, ctx)), host);
    } catch (err) {
      return signResponse(
        request,
        new Refusal('fetch', String(err?.message ?? err), { authenticated: true }),
        host,
      );
    }
  };
}

/** Runs `one()` with CONCURRENCY in flight for DURATION_MS; returns ops/s and latency percentiles. */
async function drive(one) {
  const latencies = [];
  const until = performance.now() + DURATION_MS;
  const warm = performance.now() + 300;
  const worker = async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      await one();
      if (t0 > warm) latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { ops: latencies.length / ((DURATION_MS - 300) / 1000), p50: pct(0.5), p99: pct(0.99) };
}

async function echoBaseline(frame) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise((r) => wss.on('listening', r));
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(d, { binary: false })));
  const ws = new WebSocket(`ws://127.0.0.1:${wss.address().port}/`, { perMessageDeflate: false });
  await new Promise((r) => ws.on('open', r));
  const waiting = [];
  ws.on('message', () => waiting.shift()?.());
  const result = await drive(
    () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        ws.send(frame);
      }),
  );
  ws.close();
  await new Promise((r) => wss.close(r));
  return result;
}

async function signedRoundTrips() {
  const server = await WireServer.listen({ handler: hostHandler(), maxCallsPerSession: CONCURRENCY });
  const session = await WireSession.connect(server.url);
  const signed = await drive(() => session.call(signedRequest()));
  await session.close();
  await server.close();
  return signed;
}

/** The same signing and verification with no transport at all (what a call costs in CPU). */
async function cryptoOnly() {
  const handler = hostHandler();
  const ctx = { method: 'workload.status' };
  return drive(async () => {
    const req = signedRequest();
    const res = await handler(req, ctx);
    verifyResponse(res, { request: JSON.parse(req.payload) });
  });
}

/**
 * The floor under any signed call: the same two signatures and two verifications with node:crypto
 * directly, on KeyObjects built once, over messages of a call's size (no JSON, no checks).
 */
async function rawCryptoFloor() {
  const pkcs8 = (seed) =>
    createPrivateKey({
      key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed)]),
      format: 'der',
      type: 'pkcs8',
    });
  const [c, h] = [pkcs8(controller.secretKey), pkcs8(host.secretKey)];
  const [cPub, hPub] = [createPublicKey(c), createPublicKey(h)];
  const body = Buffer.from(signedRequest().payload);
  return drive(async () => {
    const req = Buffer.concat([body, randomBytes(16)]);
    if (!verify(null, req, cPub, sign(null, req, c))) throw new Error('floor: request');
    const res = Buffer.concat([req, randomBytes(16)]);
    if (!verify(null, res, hPub, sign(null, res, h))) throw new Error('floor: response');
  });
}

const floor = await rawCryptoFloor();
const crypto = await cryptoOnly();
const sample = JSON.stringify({ t: 'call', id: 1, method: 'workload.status', signed: signedRequest() });
const echo = await echoBaseline(sample);
const signed = await signedRoundTrips();
report(`signed round trips, ${CONCURRENCY} in flight on one session (loopback)`, [
  ['bare ws echo of a call frame', echo.ops, 'round trips/s'],
  ['signed call (sign, verify, sign, verify)', signed.ops, 'round trips/s', signed.ops / echo.ops, 0.5],
  ['raw Ed25519 floor (2 sign + 2 verify)', floor.ops, 'calls/s'],
  ['same signing + verification, no transport', crypto.ops, 'calls/s', crypto.ops / floor.ops],
  ['signed call vs raw Ed25519 floor', signed.ops, 'round trips/s', signed.ops / floor.ops],
  ['signed call vs no-transport crypto', signed.ops, 'round trips/s', signed.ops / crypto.ops],
  ['bare ws echo p99', echo.p99, 'ms'],
  ['signed call p50', signed.p50, 'ms'],
  ['signed call p99', signed.p99, 'ms'],
]);

// 64 MiB package transfer.
const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
const dir = mkdtempSync(join(tmpdir(), 'heddle-wire-bench-'));
try {
  const { built, bytes } = await buildBigPackage(dir, controller, SIZE);
  const anchors = new TrustAnchors([
    { id: 'bench', role: 'publisher', publicKey: toHex(controller.publicKey) },
  ]);
  const source = DirPackageSource.open(built.dir);
  await source.pieceMap('bin/big'); // the controller's piece map is computed once, ahead of the call
  let round = 0;
  let fetchSeconds = 0;
  let verifySeconds = 0;
  const server = await WireServer.listen({
    handler: hostHandler(async (body, ctx) => {
      const t0 = performance.now();
      const out = await ctx.fetchPackage(body.manifest_hash, join(dir, `fetched-${round++}`));
      const t1 = performance.now();
      await verifyPackage(out, { anchors, revocations: NO_REVOCATIONS });
      const t2 = performance.now();
      fetchSeconds = (t1 - t0) / 1000;
      verifySeconds = (t2 - t1) / 1000;
      rmSync(out, { recursive: true, force: true });
      return null;
    }),
  });
  let bestRaw = 0;
  let bestFetch = 0;
  let bestBoth = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    blake3(bytes);
    bestRaw = Math.max(bestRaw, SIZE / MiB / ((performance.now() - t0) / 1000));
    const session = await WireSession.connect(server.url);
    await session.call(signedRequest('workload.place', { manifest_hash: built.package.manifestHash }), {
      source,
    });
    await session.close();
    bestFetch = Math.max(bestFetch, SIZE / MiB / fetchSeconds);
    bestBoth = Math.max(bestBoth, SIZE / MiB / (fetchSeconds + verifySeconds));
  }
  await server.close();
  await source.close();
  report('64 MiB package within a place call (best of 5)', [
    ['raw BLAKE3 of the bytes', bestRaw, 'MiB/s'],
    ['transfer + per-piece verify + write', bestFetch, 'MiB/s', bestFetch / bestRaw, 0.7],
    ['... then verifyPackage (signatures, rehash)', bestBoth, 'MiB/s', bestBoth / bestRaw],
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
