import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { buildCogPackage, NO_REVOCATIONS, TrustAnchors } from '@heddle/package';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import { PackageStore } from './package-store.js';
import { examplePackage, publisherKeys, tempDir } from './test-fixtures.js';

const anchors = new TrustAnchors([
  { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
]);
const strangerKeys = keyPairFromSecret(new Uint8Array(32).fill(0x99));
const roots: string[] = [];

function newStore(): { store: PackageStore; dir: string } {
  const root = tempDir('heddle-cp-pstore-');
  roots.push(root);
  const dir = join(root, 'packages');
  return { store: new PackageStore({ dir, anchors, revocations: NO_REVOCATIONS }), dir };
}

/** A copy of a built package directory (to tamper with). */
function copyOf(pkg: string): string {
  const root = tempDir('heddle-cp-pcopy-');
  roots.push(root);
  cpSync(pkg, join(root, 'pkg'), { recursive: true });
  return join(root, 'pkg');
}

async function refusal(promise: Promise<unknown>): Promise<PlaneError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PlaneError);
  return err as PlaneError;
}

let pkg: string;
let strangerPkg: string;
beforeAll(async () => {
  pkg = await examplePackage('wasi-cog');
  const root = tempDir('heddle-cp-stranger-');
  roots.push(root);
  const src = join(root, 'src');
  cpSync(join(import.meta.dirname, '../../../examples/wasi-cog'), src, { recursive: true });
  strangerPkg = join(root, 'pkg');
  await buildCogPackage(src, strangerPkg, { keys: [strangerKeys] });
});
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('PackageStore.add', () => {
  it('verifies a package and holds a copy under its manifest hash', async () => {
    const { store, dir } = newStore();
    const v = await store.add(pkg);
    expect(v.kind).toBe('cog');
    expect(v.manifestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(v.signerKeys).toEqual([toHex(publisherKeys.publicKey)]);
    expect(v.dir).toBe(store.pathOf(v.manifestHash));
    expect(store.pathOf(v.manifestHash)).toBe(join(dir, v.manifestHash));
    expect(readdirSync(dir)).toEqual([v.manifestHash]);
    expect(readdirSync(store.pathOf(v.manifestHash)).sort()).toEqual(readdirSync(pkg).sort());
    // The held copy stands without the operator's directory.
    const again = await store.get(v.manifestHash);
    expect(again.manifestHash).toBe(v.manifestHash);
    expect(again.packageId).toBe(v.packageId);
  });

  it('reuses the held copy when the same package is added again', async () => {
    const { store, dir } = newStore();
    const a = await store.add(pkg);
    const marker = join(store.pathOf(a.manifestHash), 'hello.wasm');
    const before = readFileSync(marker);
    const b = await store.add(copyOf(pkg));
    expect(b.manifestHash).toBe(a.manifestHash);
    expect(readdirSync(dir)).toEqual([a.manifestHash]);
    expect(readFileSync(marker)).toEqual(before);
  });

  it('holds two packages side by side', async () => {
    const { store, dir } = newStore();
    const a = await store.add(pkg);
    const b = await store.add(await examplePackage('wasi-cog'));
    expect(a.manifestHash).not.toBe(b.manifestHash);
    expect(readdirSync(dir).sort()).toEqual([a.manifestHash, b.manifestHash].sort());
  });

  it.each([
    ['signed by a key the controller does not trust', () => strangerPkg, 'untrusted_signer'],
    [
      'with a tampered file',
      () => {
        const d = copyOf(pkg);
        const f = join(d, 'hello.wasm');
        const bytes = readFileSync(f);
        bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
        writeFileSync(f, bytes);
        return d;
      },
      'file_tampered',
    ],
    [
      'with a file missing',
      () => {
        const d = copyOf(pkg);
        rmSync(join(d, 'hello.wasm'));
        return d;
      },
      'file_missing',
    ],
    ['that does not exist', () => join(tempDir('heddle-cp-none-'), 'missing'), 'manifest_invalid'],
  ])('refuses a package %s with package_invalid, holding nothing', async (_what, make, code) => {
    const { store, dir } = newStore();
    const err = await refusal(store.add(make()));
    expect(err.code).toBe('package_invalid');
    expect(err.field).toBe('package_dir');
    expect(err.message).toContain(`${code}: `);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('drops a held copy that no longer verifies when the package is added again, then holds it afresh', async () => {
    const { store, dir } = newStore();
    const v = await store.add(pkg);
    writeFileSync(join(store.pathOf(v.manifestHash), 'hello.wasm'), 'tampered');
    const err = await refusal(store.add(pkg));
    expect(err.code).toBe('package_invalid');
    expect(err.message).toContain('file_tampered: ');
    expect(readdirSync(dir)).toEqual([]);
    expect((await store.add(pkg)).manifestHash).toBe(v.manifestHash);
    expect(readdirSync(dir)).toEqual([v.manifestHash]);
  });
});

describe('PackageStore.get', () => {
  it('refuses a hash it does not hold and one that is not a hash, naming manifest_hash', async () => {
    const { store } = newStore();
    for (const h of ['ab'.repeat(32), 'AB'.repeat(32), 'ab', '', '../../etc', `${'ab'.repeat(32)}/..`]) {
      const err = await refusal(store.get(h));
      expect(err.code).toBe('package_invalid');
      expect(err.field).toBe('manifest_hash');
    }
  });

  it('verifies the held copy on every use: a copy tampered on disk is refused', async () => {
    const { store } = newStore();
    const v = await store.add(pkg);
    const f = join(store.pathOf(v.manifestHash), 'hello.wasm');
    writeFileSync(f, Buffer.concat([readFileSync(f), Buffer.from([0])]));
    const err = await refusal(store.get(v.manifestHash));
    expect(err.code).toBe('package_invalid');
    expect(err.field).toBe('manifest_hash');
    expect(err.message).toContain('file_tampered: ');
    expect(existsSync(store.pathOf(v.manifestHash))).toBe(true); // get() keeps it; add() decides
  });

  it('shares verifications among concurrent uses, and a use made after a tamper still sees it', async () => {
    const { store } = newStore();
    const v = await store.add(pkg);
    // Many uses at once: all answered (by a few shared verifications, each started after its calls).
    const all = await Promise.all(Array.from({ length: 50 }, () => store.get(v.manifestHash)));
    expect(new Set(all.map((w) => w.manifestHash))).toEqual(new Set([v.manifestHash]));
    // A use while a verification runs, made after the copy was tampered with, is never answered by
    // the verification that started before the tamper.
    const f = join(store.pathOf(v.manifestHash), 'hello.wasm');
    const clean = readFileSync(f);
    const before = store.get(v.manifestHash).then(
      () => 'ok',
      () => 'refused',
    );
    await new Promise((r) => setImmediate(r)); // its verification is under way (or done)
    writeFileSync(f, Buffer.concat([clean, Buffer.from([0])]));
    const err = await refusal(store.get(v.manifestHash));
    expect(err.message).toContain('file_tampered: ');
    expect(['ok', 'refused']).toContain(await before);
    writeFileSync(f, clean);
    expect((await store.get(v.manifestHash)).manifestHash).toBe(v.manifestHash);
  });

  it('refuses a held copy whose signature is by a key no longer trusted', async () => {
    const { store, dir } = newStore();
    const v = await store.add(pkg);
    const other = new PackageStore({
      dir,
      anchors: new TrustAnchors([
        { id: 'other', role: 'publisher', publicKey: toHex(strangerKeys.publicKey) },
      ]),
      revocations: NO_REVOCATIONS,
    });
    const err = await refusal(other.get(v.manifestHash));
    expect(err.message).toContain('untrusted_signer: ');
  });

  it('refuses a held directory that holds another package than its name, and drops what a crash left incoming', async () => {
    const { store, dir } = newStore();
    const a = await store.add(pkg);
    const fake = 'ab'.repeat(32);
    renameSync(store.pathOf(a.manifestHash), join(dir, fake));
    const err = await refusal(store.get(fake));
    expect(err.code).toBe('package_invalid');
    expect(err.field).toBe('manifest_hash');
    expect(err.message).toContain('manifest_invalid: ');
    mkdirSync(join(dir, '.incoming-0123456789ab'));
    new PackageStore({ dir, anchors, revocations: NO_REVOCATIONS });
    expect(readdirSync(dir)).toEqual([fake]);
  });
});
