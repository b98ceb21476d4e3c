// The host side of bench/transfer.bench.mjs, in its own process (as a real host is): a WireServer whose
// handler verifies the signed call and obtains the package into a fresh VerifiedPackageStore, as the
// host service does (the fetch checks every byte, so the store does not hash again). Sends
// `{ url }` to its parent once listening, then `{ seconds }` (the obtain's time) after each call.
import { join } from 'node:path';
import { keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { NO_REVOCATIONS, TrustAnchors, VerifiedPackageStore } from '@heddle/package';
import { AllowListPolicy, NonceGuard, okOutcome, signResponse, verifyRequest } from '@heddle/protocol';
import { WireServer } from '@heddle/wire';

const [dir, publisherHex, windowArg] = process.argv.slice(2);
const host = keyPairFromSecret(new Uint8Array(32).fill(0x22));
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x11));
const HOST_ID = nodeIdFromPublicKey(host.publicKey);
const anchors = new TrustAnchors([{ id: 'bench', role: 'publisher', publicKey: publisherHex }]);
const nonces = new NonceGuard({ capacity: 1 << 16 });
const policy = new AllowListPolicy({ nodeIds: [nodeIdFromPublicKey(controller.publicKey)] });
const window = windowArg === undefined || windowArg === '' ? {} : { window: Number(windowArg) };
let round = 0;
const server = await WireServer.listen({
  handler: async (signed, ctx) => {
    const { request } = verifyRequest(signed, {
      nodeId: HOST_ID,
      now: Date.now(),
      policy,
      nonces,
      expectedMethod: ctx.method,
    });
    const store = new VerifiedPackageStore({
      dir: join(dir, `host-${round++}`),
      anchors,
      revocations: NO_REVOCATIONS,
    });
    const t0 = performance.now();
    await store.obtain(request.body.manifest_hash, async (hash, dest) => ({
      dir: await ctx.fetchPackage(hash, dest, {
        checkEnvelope: (pkg) => store.checkEnvelope(pkg),
        ...window,
      }),
      contentVerified: true,
    }));
    process.send({ seconds: (performance.now() - t0) / 1000 });
    return signResponse(request, okOutcome(null), host);
  },
});
process.send({ url: server.url, publisher: toHex(controller.publicKey) });
process.on('disconnect', () => void server.close().then(() => process.exit(0)));
