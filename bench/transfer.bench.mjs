// (e) A 64 MiB package transfer to a host, at the speed of hashing: a controller-side
// `DirPackageSource` serving a held package over a real loopback WebSocket to a host that fetches it
// inside a signed call into its `VerifiedPackageStore` (`obtain`: fetch with per-piece verification,
// checks, fsync, rename), versus raw BLAKE3 of the same 64 MiB in memory (the library's own BLAKE3)
// and a plain file copy, both measured in the same run. Imports the built packages (`pnpm build`).
// `--rounds=N` (default 5, best of N).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3, keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { NO_REVOCATIONS, TrustAnchors, VerifiedPackageStore } from '@heddle/package';
import {
  AllowListPolicy,
  createRequest,
  NonceGuard,
  okOutcome,
  signRequest,
  signResponse,
  verifyRequest,
} from '@heddle/protocol';
import { DirPackageSource, WireServer, WireSession } from '@heddle/wire';
import { buildBigPackage } from './big-package.mjs';
import { report } from './harness.mjs';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5);
const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x11));
const host = keyPairFromSecret(new Uint8Array(32).fill(0x22));
const CONTROLLER_ID = nodeIdFromPublicKey(controller.publicKey);
const HOST_ID = nodeIdFromPublicKey(host.publicKey);
const dir = mkdtempSync(join(tmpdir(), 'heddle-transfer-bench-'));

try {
  const { built, bytes } = await buildBigPackage(dir, controller, SIZE);
  const anchors = new TrustAnchors([{ id: 'bench', role: 'publisher', publicKey: toHex(controller.publicKey) }]);
  // The controller's store: the package is added (verified, hashed) once, before any transfer.
  const controllerStore = new VerifiedPackageStore({ dir: join(dir, 'controller'), anchors, revocations: NO_REVOCATIONS });
  const held = await controllerStore.add(built.dir);
  const nonces = new NonceGuard({ capacity: 1 << 16 });
  const policy = new AllowListPolicy({ nodeIds: [CONTROLLER_ID] });
  let hostStore;
  let seconds = 0;
  const server = await WireServer.listen({
    handler: async (signed, ctx) => {
      const { request } = verifyRequest(signed, { nodeId: HOST_ID, now: Date.now(), policy, nonces, expectedMethod: ctx.method });
      const t0 = performance.now();
      // As the host service does: the fetch checked every byte, so the store does not hash again.
      await hostStore.obtain(request.body.manifest_hash, async (hash, dest) => ({
        dir: await ctx.fetchPackage(hash, dest, { checkEnvelope: (pkg) => hostStore.checkEnvelope(pkg), ...(process.env.W ? { window: Number(process.env.W) } : {}) }),
        contentVerified: true,
      }));
      seconds = (performance.now() - t0) / 1000;
      return signResponse(request, okOutcome(null), host);
    },
  });
  let raw = 0;
  let copy = 0;
  let transfer = 0;
  for (let i = 0; i < ROUNDS; i++) {
    let t0 = performance.now();
    blake3(bytes);
    raw = Math.max(raw, SIZE / MiB / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    copyFileSync(join(built.dir, 'bin', 'big'), join(dir, `copy-${i}`));
    copy = Math.max(copy, SIZE / MiB / ((performance.now() - t0) / 1000));
    rmSync(join(dir, `copy-${i}`));
    hostStore = new VerifiedPackageStore({ dir: join(dir, `host-${i}`), anchors, revocations: NO_REVOCATIONS });
    const source = DirPackageSource.open(held.dir);
    const session = await WireSession.connect(server.url);
    const request = createRequest({
      method: 'workload.place',
      requester: CONTROLLER_ID,
      target: HOST_ID,
      body: { manifest_hash: held.manifestHash },
      now: Date.now(),
      decisionId: (i + 1).toString(16).padStart(64, '0'),
    });
    await session.call(signRequest(request, controller), { source });
    await session.close();
    await source.close();
    transfer = Math.max(transfer, SIZE / MiB / seconds);
    rmSync(join(dir, `host-${i}`), { recursive: true, force: true });
  }
  await server.close();
  report(`64 MiB package to a host's store over loopback (best of ${ROUNDS})`, [
    ['raw BLAKE3 in memory (baseline)', raw, 'MiB/s'],
    ['file copy (copyFileSync)', copy, 'MiB/s', copy / raw],
    ['transfer: fetch, verify, fsync, rename', transfer, 'MiB/s', transfer / raw, 0.7],
    ['transfer vs file copy', transfer, 'MiB/s', transfer / copy],
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
