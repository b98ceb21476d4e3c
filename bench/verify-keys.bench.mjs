// Ed25519 verification rotating over 2,048 peer keys (a controller verifying its fleet's answers)
// through @heddle/envelope, against raw node:crypto with key objects built once, measured in the same
// run: first with the default key cache (1,024 keys: every verification rebuilds its key), then after
// `growVerifyKeyCache(2048)` (what the control plane does for the nodes it knows). Build first.
import { createPublicKey, verify as cryptoVerify, randomBytes } from 'node:crypto';
import {
  growVerifyKeyCache,
  keyPairFromSecret,
  sign,
  verify,
  verifyKeyCacheCapacity,
} from '@heddle/envelope';
import { report } from './harness.mjs';

const PEERS = 2048;
const SPKI = Buffer.from('302a300506032b6570032100', 'hex');
const message = new Uint8Array(randomBytes(200));
const peers = Array.from({ length: PEERS }, (_, i) => {
  const k = keyPairFromSecret(new Uint8Array(randomBytes(32)));
  const raw = createPublicKey({ key: Buffer.concat([SPKI, k.publicKey]), format: 'der', type: 'spki' });
  return { publicKey: k.publicKey, raw, signature: sign(k.secretKey, message), i };
});

let sink = 0;
/** Verifications per second over the peers in turn, for about `ms`. */
function rate(fn, ms) {
  let n = 0;
  const t0 = performance.now();
  let now = t0;
  while (now - t0 < ms) {
    for (let k = 0; k < PEERS; k++) sink ^= fn(peers[k]) ? 1 : 0;
    n += PEERS;
    now = performance.now();
  }
  return n / ((now - t0) / 1000);
}

const raw = (p) => cryptoVerify(null, message, p.raw, p.signature);
const envelope = (p) => verify(p.publicKey, message, p.signature);

/** Median of paired slices (raw, envelope), alternating which goes first. */
function paired(pairs = 9, ms = 250) {
  const r = [];
  const e = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      r.push(rate(raw, ms));
      e.push(rate(envelope, ms));
    } else {
      e.push(rate(envelope, ms));
      r.push(rate(raw, ms));
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return { raw: med(r), env: med(e), ratio: med(r.map((x, i) => e[i] / x)) };
}

const before = verifyKeyCacheCapacity();
const small = paired();
growVerifyKeyCache(PEERS);
const grown = paired();
report(
  `Ed25519 verify rotating over ${PEERS} peer keys (median of paired slices; ratio to raw node:crypto)`,
  [
    ['raw node:crypto, prebuilt key objects (baseline)', grown.raw, 'verifies/s'],
    [`envelope verify, key cache ${before}`, small.env, 'verifies/s', small.ratio],
    [`envelope verify, key cache grown to ${verifyKeyCacheCapacity()}`, grown.env, 'verifies/s', grown.ratio],
  ],
);
if (sink === 2) console.log('');
