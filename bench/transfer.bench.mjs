// (e) A 64 MiB package transfer to a host, at the speed of hashing. The controller side (this process)
// serves a package held in its `VerifiedPackageStore` (added, so hashed and its piece maps kept, once
// before any transfer) with a `DirPackageSource`, over a real loopback WebSocket, inside a signed
// call, to a host in another process (bench/transfer-host.mjs) that obtains it into its own store:
// fetch with a window of pieces in flight, each byte hashed once, written as it arrives, then
// signatures, paths and sizes checked, fsync, rename. Baselines measured in the same run: raw BLAKE3 of
// the same 64 MiB in memory (the library's BLAKE3, one thread: native @napi-rs/blake-hash when
// installed, else WebAssembly; `HEDDLE_BLAKE3=portable` forces WebAssembly in both processes) and a
// plain file copy.
// Imports the built packages (`pnpm build`). `--rounds=N` (default 5, best of N); `--window=N`.
import { fork } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3, blake3Backend, keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { NO_REVOCATIONS, TrustAnchors, VerifiedPackageStore } from '@heddle/package';
import { createRequest, signRequest } from '@heddle/protocol';
import { DirPackageSource, WireSession } from '@heddle/wire';
import { buildBigPackage } from './big-package.mjs';
import { report } from './harness.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ROUNDS = Number(arg('rounds', 5));
const WINDOW = arg('window', '');
const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x11));
const host = keyPairFromSecret(new Uint8Array(32).fill(0x22));
const dir = mkdtempSync(join(tmpdir(), 'heddle-transfer-bench-'));
let child;

try {
  const { built, bytes } = await buildBigPackage(dir, controller, SIZE);
  const anchors = new TrustAnchors([
    { id: 'bench', role: 'publisher', publicKey: toHex(controller.publicKey) },
  ]);
  const store = new VerifiedPackageStore({
    dir: join(dir, 'controller'),
    anchors,
    revocations: NO_REVOCATIONS,
  });
  const held = await store.add(built.dir);
  child = fork(new URL('./transfer-host.mjs', import.meta.url), [dir, toHex(controller.publicKey), WINDOW], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROF] : [],
  });
  const messages = [];
  const waiting = [];
  child.on('message', (m) => (waiting.length > 0 ? waiting.shift()(m) : messages.push(m)));
  const next = () =>
    messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((r) => waiting.push(r));
  const { url } = await next();
  let raw = 0;
  let copy = 0;
  let transfer = 0;
  let call = 0;
  for (let i = 0; i < ROUNDS; i++) {
    let t0 = performance.now();
    blake3(bytes);
    raw = Math.max(raw, SIZE / MiB / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    copyFileSync(join(built.dir, 'bin', 'big'), join(dir, 'copy'));
    copy = Math.max(copy, SIZE / MiB / ((performance.now() - t0) / 1000));
    rmSync(join(dir, 'copy'));
    t0 = performance.now();
    // As the control plane does at each place: the held package verified again (stamps unchanged:
    // not hashed), a source opened on it (piece maps from the store's cache).
    const verified = await store.get(held.manifestHash);
    const source = DirPackageSource.open(verified.dir);
    const session = await WireSession.connect(url);
    const request = createRequest({
      method: 'workload.place',
      requester: nodeIdFromPublicKey(controller.publicKey),
      target: nodeIdFromPublicKey(host.publicKey),
      body: { manifest_hash: held.manifestHash },
      now: Date.now(),
      decisionId: (i + 1).toString(16).padStart(64, '0'),
    });
    await session.call(signRequest(request, controller), { source, expectedPublicKey: host.publicKey });
    call = Math.max(call, SIZE / MiB / ((performance.now() - t0) / 1000));
    const { seconds } = await next();
    transfer = Math.max(transfer, SIZE / MiB / seconds);
    await session.close();
    await source.close();
    rmSync(join(dir, `host-${i}`), { recursive: true, force: true });
  }
  report(
    `64 MiB package to a host in another process over loopback (best of ${ROUNDS}; BLAKE3 ${blake3Backend()})`,
    [
      ['raw BLAKE3 in memory (baseline)', raw, 'MiB/s'],
      ['file copy (copyFileSync)', copy, 'MiB/s', copy / raw],
      ['host obtain: fetch, verify, fsync, rename', transfer, 'MiB/s', transfer / raw, 0.7],
      ['whole place call (controller side)', call, 'MiB/s', call / raw],
      ['host obtain vs file copy', transfer, 'MiB/s', transfer / copy],
    ],
  );
} finally {
  child?.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
