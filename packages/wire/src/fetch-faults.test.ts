// Faults of the piece exchange, with the controller side spoken by hand over a raw `ws` client (as an
// independent controller written from docs/protocol.md 13 would): each fault is placed at a known
// point of the window, and the host's fetch must end verified, or refused with its documented code
// and nothing left where it was writing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import {
  computeFilePieceMap,
  NO_REVOCATIONS,
  pieceMapToJson,
  TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { encodeBinaryFrame } from './binary-frame.js';
import { WireError } from './errors.js';
import type { FetchOptions } from './fetch-package.js';
import { WireServer } from './server.js';
import { buildPackage, controller, hostHandler, signed, tempDir } from './test-fixtures.js';

const servers: WireServer[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const P = 16 * 1024; // small pieces: many of them in a small package
const anchors = new TrustAnchors(
  [{ id: 'pub', role: 'publisher', publicKey: toHex(controller.publicKey) }],
  1,
);

interface Outcome {
  readonly dest: string;
  readonly result: Promise<{ dir: string } | { error: unknown }>;
}

/** A host fetching `manifest_hash` on place into a fresh directory; the outcome is kept. */
async function host(options: FetchOptions): Promise<{ url: string; outcomes: Outcome[] }> {
  const outcomes: Outcome[] = [];
  const server = await WireServer.listen({
    handler: hostHandler(async (body, ctx) => {
      const dest = join(tempDir(), 'fetched');
      const run = ctx.fetchPackage((body as { manifest_hash: string }).manifest_hash, dest, options);
      outcomes.push({
        dest,
        result: run.then(
          (dir) => ({ dir }),
          (error: unknown) => ({ error }),
        ),
      });
      return { dir: await run };
    }),
  });
  servers.push(server);
  return { url: server.url, outcomes };
}

interface PieceRequest {
  readonly id: number;
  readonly path: string;
  readonly index: number;
}

/**
 * A controller by hand: sends one place call, answers `fetch_manifest` and `fetch_map` from the
 * package in `dir`, and hands each `fetch_piece` to `onPiece` (with the requests not yet answered).
 */
async function controllerByHand(
  url: string,
  dir: string,
  manifestHash: string,
  onPiece: (req: PieceRequest, ws: WebSocket, open: Set<number>) => void,
): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  sockets.push(ws);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const open = new Set<number>();
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const frame = JSON.parse(String(data)) as { t: string; id: number; path: string; index: number };
    if (frame.t === 'fetch_manifest') {
      ws.send(encodeBinaryFrame(2, frame.id, readFileSync(join(dir, 'heddle-package.json'))));
    } else if (frame.t === 'fetch_map') {
      void computeFilePieceMap(join(dir, frame.path), P).then((map) =>
        ws.send(JSON.stringify({ t: 'piece_map', id: frame.id, map: pieceMapToJson(map) })),
      );
    } else if (frame.t === 'fetch_piece') {
      open.add(frame.id);
      onPiece({ id: frame.id, path: frame.path, index: frame.index }, ws, open);
    }
  });
  ws.send(
    JSON.stringify({
      t: 'call',
      id: 1,
      method: 'workload.place',
      signed: signed('workload.place', { manifest_hash: manifestHash }),
    }),
  );
  return ws;
}

/** Sends piece `index` of `path` (its true bytes, or what `change` makes of them). */
function answer(
  ws: WebSocket,
  dir: string,
  req: PieceRequest,
  open: Set<number>,
  change = (b: Buffer) => b,
): void {
  const bytes = readFileSync(join(dir, req.path)).subarray(req.index * P, (req.index + 1) * P);
  open.delete(req.id);
  ws.send(encodeBinaryFrame(1, req.id, change(Buffer.from(bytes))));
}

async function failure(outcome: Outcome | undefined): Promise<WireError> {
  const r = await (outcome as Outcome).result;
  expect(r).toHaveProperty('error');
  const err = (r as { error: unknown }).error;
  expect(err).toBeInstanceOf(WireError);
  // Nothing half-written: the fetch removed what it wrote.
  expect(existsSync((outcome as Outcome).dest)).toBe(false);
  return err as WireError;
}

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('piece exchange faults (a controller spoken by hand)', () => {
  it('a connection killed mid-window: the fetch fails closed, nothing is left', async () => {
    const built = await buildPackage(40 * P);
    const { url, outcomes } = await host({ window: 8 });
    let killedWith = -1;
    let answered = 0;
    await controllerByHand(url, built.dir, built.package.manifestHash, (req, ws, open) => {
      if (req.path !== 'run.wasm') return answer(ws, built.dir, req, open);
      // Answer the first 10 pieces of run.wasm; then hold the rest until the window is full of
      // requests, and kill the connection while they are all still open.
      if (answered < 10) {
        answered++;
        return answer(ws, built.dir, req, open);
      }
      if (open.size >= 8 && killedWith < 0) {
        killedWith = open.size;
        ws.terminate();
      }
    });
    await until(() => outcomes.length === 1);
    const err = await failure(outcomes[0]);
    // The fault landed mid-transfer and mid-window: pieces had been delivered, and a full window of
    // requests was open when the connection died.
    expect(answered).toBe(10);
    expect(killedWith).toBe(8);
    expect(err.code).toBe('closed');
  });

  it('a truncated piece is refused at that piece; nothing is left', async () => {
    const built = await buildPackage(12 * P);
    const { url, outcomes } = await host({ window: 4 });
    await controllerByHand(url, built.dir, built.package.manifestHash, (req, ws, open) =>
      answer(ws, built.dir, req, open, (b) =>
        req.path === 'run.wasm' && req.index === 5 ? b.subarray(0, 1000) : b,
      ),
    );
    await until(() => outcomes.length === 1);
    const err = await failure(outcomes[0]);
    expect(err.code).toBe('piece_rejected');
    expect(err.field).toMatch(/pieces\[5\]$/);
  });

  it('a stream that stops mid-window: the missing pieces are asked again, then the fetch times out', async () => {
    const built = await buildPackage(12 * P);
    const { url, outcomes } = await host({ window: 4, timeoutMs: 100, attempts: 2 });
    const asked = new Map<number, number>();
    await controllerByHand(url, built.dir, built.package.manifestHash, (req, ws, open) => {
      if (req.path !== 'run.wasm') return answer(ws, built.dir, req, open);
      asked.set(req.index, (asked.get(req.index) ?? 0) + 1);
      if (req.index < 6) answer(ws, built.dir, req, open); // then silence, the connection kept open
    });
    await until(() => outcomes.length === 1);
    const err = await failure(outcomes[0]);
    expect(err.code).toBe('timeout');
    // The pieces open when the stream stopped were each asked twice (the attempts), none more.
    expect(asked.get(6)).toBe(2);
    expect(Math.max(...asked.values())).toBe(2);
  });

  it('a corrupt piece mid-window is refused naming it; nothing is left', async () => {
    const built = await buildPackage(30 * P);
    const { url, outcomes } = await host({ window: 6 });
    await controllerByHand(url, built.dir, built.package.manifestHash, (req, ws, open) =>
      answer(ws, built.dir, req, open, (b) => {
        if (req.path === 'run.wasm' && req.index === 17) b[100] = (b[100] ?? 0) ^ 0x10;
        return b;
      }),
    );
    await until(() => outcomes.length === 1);
    const err = await failure(outcomes[0]);
    expect(err.code).toBe('piece_rejected');
    expect(err.message).toContain('run.wasm piece 17');
    expect(err.field).toMatch(/pieces\[17\]$/);
  });

  it('a window larger than the piece count: every piece asked once, all at once, and it verifies', async () => {
    const built = await buildPackage(3 * P + 5);
    const { url, outcomes } = await host({ window: 64 });
    const asked: number[] = [];
    let mostOpen = 0;
    await controllerByHand(url, built.dir, built.package.manifestHash, (req, ws, open) => {
      if (req.path !== 'run.wasm') return answer(ws, built.dir, req, open);
      asked.push(req.index);
      mostOpen = Math.max(mostOpen, open.size);
      // Answer only once all four are asked: proves they were in flight together.
      if (open.size === 4) for (const r of [...pending, req]) answer(ws, built.dir, r, open);
      else pending.push(req);
    });
    const pending: PieceRequest[] = [];
    await until(() => outcomes.length === 1);
    const r = await (outcomes[0] as Outcome).result;
    expect(r).toHaveProperty('dir');
    expect(asked.sort()).toEqual([0, 1, 2, 3]);
    expect(mostOpen).toBe(4);
    const verified = await verifyPackage((r as { dir: string }).dir, {
      anchors,
      revocations: NO_REVOCATIONS,
    });
    expect(verified.manifestHash).toBe(built.package.manifestHash);
  });
});
