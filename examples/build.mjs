#!/usr/bin/env node
// The examples build: assembles the WASI cog from its WAT source, then builds, signs and verifies every
// example cog into examples/dist/ with an example publisher key (created once, mode 0600) and writes
// the matching trust file. Run after `pnpm build`: `node examples/build.mjs` (or `pnpm examples`).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, loadKeyFile, saveKeyFile, toHex } from '@heddle/envelope';
import { buildCogPackage, NO_REVOCATIONS, TrustAnchors, verifyPackage } from '@heddle/package';
import { build as buildWasiCog } from './wasi-cog/build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
mkdirSync(dist, { recursive: true });

const keyPath = join(dist, 'publisher.key');
if (!existsSync(keyPath)) saveKeyFile(keyPath, generateKeyPair());
const publisher = loadKeyFile(keyPath);
const trust = {
  schema: 'heddle.trust.v1',
  keys: [{ id: 'examples', role: 'publisher', public_key: toHex(publisher.publicKey) }],
};
writeFileSync(join(dist, 'trust.json'), `${JSON.stringify(trust, null, 2)}\n`);
const anchors = new TrustAnchors([
  { id: 'examples', role: 'publisher', publicKey: toHex(publisher.publicKey) },
]);

const wasm = buildWasiCog();
console.log(`assembled examples/wasi-cog/hello.wasm (${wasm.length} bytes)`);

for (const name of ['hello-cog', 'native-cog', 'wasi-cog']) {
  const out = join(dist, name);
  await buildCogPackage(join(here, name), out, { keys: [publisher], force: true });
  const v = await verifyPackage(out, { anchors, revocations: NO_REVOCATIONS });
  console.log(
    `${name}: package ${v.packageId.slice(0, 16)}... signed by ${v.signerIds.join(', ')}, ${v.files.length} files`,
  );
}
console.log(`packages in ${dist}; trust anchors in ${join(dist, 'trust.json')}`);
