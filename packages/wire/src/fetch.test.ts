import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import {
  encodeEnvelope,
  manifestHashOf,
  NO_REVOCATIONS,
  type PackageEnvelope,
  TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import { afterEach, describe, expect, it } from 'vitest';
import { WireClient } from './client.js';
import { WireError } from './errors.js';
import type { FetchOptions } from './fetch-package.js';
import { DirPackageSource, type PackageSource } from './package-source.js';
import { WireServer } from './server.js';
import { buildPackage, controller, hostHandler, signed, tempDir } from './test-fixtures.js';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const anchors = new TrustAnchors(
  [{ id: 'pub', role: 'publisher', publicKey: toHex(controller.publicKey) }],
  1,
);

/** A host that fetches `body.manifest_hash` on place; the fetch error (if any) is kept. */
async function placingHost(
  options: FetchOptions = {},
): Promise<{ server: WireServer; errors: unknown[]; dirs: string[] }> {
  const errors: unknown[] = [];
  const dirs: string[] = [];
  const server = await WireServer.listen({
    handler: hostHandler(async (body, ctx) => {
      const hash = (body as { manifest_hash: string }).manifest_hash;
      try {
        const dir = await ctx.fetchPackage(hash, join(tempDir(), 'fetched'), options);
        dirs.push(dir);
        return { dir };
      } catch (err) {
        errors.push(err);
        throw err;
      }
    }),
  });
  servers.push(server);
  return { server, errors, dirs };
}

function place(
  server: WireServer,
  source: PackageSource,
  manifestHash = source.manifestHash,
): Promise<unknown> {
  return new WireClient().call(server.url, signed('workload.place', { manifest_hash: manifestHash }), {
    source,
  });
}

describe('piece exchange within a place call', () => {
  it('fetches a real package over the call connection, and it verifies', async () => {
    const built = await buildPackage(1024 * 1024 + 123);
    const { server, dirs } = await placingHost();
    const source = DirPackageSource.open(built.dir);
    await place(server, source);
    const dir = dirs[0] as string;
    const verified = await verifyPackage(dir, { anchors, revocations: NO_REVOCATIONS });
    expect(verified.manifestHash).toBe(built.package.manifestHash);
    expect(verified.files.map((f) => f.path).sort()).toEqual(['bin/run.sh', 'run.wasm']);
  });

  it('checkEnvelope runs before any file is requested; what it throws ends the fetch', async () => {
    const built = await buildPackage(64 * 1024);
    let pieces = 0;
    const inner = DirPackageSource.open(built.dir);
    const source: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: () => inner.manifest(),
      pieceMap: (path) => {
        pieces++;
        return inner.pieceMap(path);
      },
      piece: (path, index) => inner.piece(path, index),
    };
    const seen: string[] = [];
    const { server, errors } = await placingHost({
      checkEnvelope: (pkg) => {
        seen.push(pkg.packageId);
        throw new WireError('invalid_argument', 'not this signer');
      },
    });
    await expect(place(server, source)).rejects.toThrow();
    expect(seen).toEqual([built.package.packageId]);
    expect(pieces).toBe(0);
    expect(errors[0]).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('not this signer'),
    });
    await inner.close();
  });

  it('resumes after a dropped piece', async () => {
    const built = await buildPackage(600 * 1024);
    const { server, dirs } = await placingHost({ timeoutMs: 150 });
    const inner = DirPackageSource.open(built.dir);
    let dropped = 0;
    const flaky: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: () => inner.manifest(),
      pieceMap: (p) => inner.pieceMap(p),
      piece: (p, i) =>
        p === 'run.wasm' && i === 1 && dropped++ === 0 ? new Promise(() => {}) : inner.piece(p, i),
    };
    await place(server, flaky);
    expect(dropped).toBe(2);
    await verifyPackage(dirs[0] as string, { anchors, revocations: NO_REVOCATIONS });
  });

  it('fetches correctly when pieces arrive out of order', async () => {
    const built = await buildPackage(40 * 64 * 1024 + 99);
    const { server, dirs } = await placingHost({ window: 6 });
    const inner = DirPackageSource.open(built.dir, { pieceSize: 64 * 1024 });
    const arrived: number[] = [];
    const shuffled: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: () => inner.manifest(),
      pieceMap: (p) => inner.pieceMap(p),
      piece: async (p, i) => {
        const bytes = await inner.piece(p, i);
        // Every third piece is held back, so later ones overtake it.
        if (p === 'run.wasm' && i % 3 === 0) await new Promise((r) => setTimeout(r, 15));
        if (p === 'run.wasm') arrived.push(i);
        return bytes;
      },
    };
    await place(server, shuffled);
    expect(arrived).not.toEqual([...arrived].sort((a, b) => a - b));
    const verified = await verifyPackage(dirs[0] as string, { anchors, revocations: NO_REVOCATIONS });
    expect(verified.manifestHash).toBe(built.package.manifestHash);
    await inner.close();
  });

  it('rejects a corrupted piece at that piece', async () => {
    const built = await buildPackage(1024 * 1024);
    const { server, errors } = await placingHost();
    const inner = DirPackageSource.open(built.dir);
    const evil: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: () => inner.manifest(),
      pieceMap: (p) => inner.pieceMap(p),
      piece: async (p, i) => {
        const bytes = Buffer.from(await inner.piece(p, i));
        if (p === 'run.wasm' && i === 2) bytes[7] = (bytes[7] ?? 0) ^ 1;
        return bytes;
      },
    };
    const err = await place(server, evil).catch((e: unknown) => e);
    expect((err as { refusal?: { code: string; reason: string } }).refusal?.code).toBe('fetch');
    const cause = errors[0] as WireError;
    expect(cause).toBeInstanceOf(WireError);
    expect(cause.code).toBe('piece_rejected');
    expect(cause.message).toContain('run.wasm piece 2');
    expect(cause.field).toMatch(/pieces\[2\]$/);
  });

  it('refuses a wrong file (its piece map is not the signed file)', async () => {
    const built = await buildPackage(100 * 1024);
    const { server, errors } = await placingHost();
    const inner = DirPackageSource.open(built.dir);
    const evil: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: () => inner.manifest(),
      pieceMap: (p) => inner.pieceMap(p === 'run.wasm' ? 'bin/run.sh' : p),
      piece: (p, i) => inner.piece(p === 'run.wasm' ? 'bin/run.sh' : p, i),
    };
    await place(server, evil).catch(() => {});
    expect((errors[0] as WireError).code).toBe('artifact_mismatch');
    expect((errors[0] as WireError).message).toContain('run.wasm');
  });

  it('refuses a 10 GB size claim before fetching any file', async () => {
    const built = await buildPackage(1000);
    const envelope = JSON.parse(Buffer.from(built.package.envelopeBytes).toString('utf8')) as PackageEnvelope;
    const body = envelope.body as { files: { path: string; size: number }[] };
    for (const f of body.files) if (f.path === 'run.wasm') f.size = 10 * 1024 ** 3;
    const bytes = encodeEnvelope(envelope);
    const asked: string[] = [];
    const evil: PackageSource = {
      manifestHash: manifestHashOf(bytes),
      manifest: async () => bytes,
      pieceMap: async (p) => {
        asked.push(p);
        throw new Error('never');
      },
      piece: async () => {
        throw new Error('never');
      },
    };
    const { server, errors } = await placingHost();
    await place(server, evil).catch(() => {});
    expect((errors[0] as WireError).code).toBe('too_large');
    expect(asked).toEqual([]);
  });

  it('the controller serves only the package of that call', async () => {
    const built = await buildPackage(1000);
    const other = await buildPackage(2000);
    const { server, errors } = await placingHost();
    const source = DirPackageSource.open(built.dir);
    await place(server, source, other.package.manifestHash).catch(() => {});
    expect((errors[0] as WireError).code).toBe('fetch_refused');
    // A call without a source offers nothing.
    const res = await new WireClient()
      .call(server.url, signed('workload.place', { manifest_hash: built.package.manifestHash }))
      .catch((e: unknown) => e);
    expect((res as { refusal?: { code: string } }).refusal?.code).toBe('fetch');
    expect((errors[1] as WireError).code).toBe('fetch_refused');
  });

  it('an envelope that does not hash to the manifest hash is refused', async () => {
    const built = await buildPackage(1000);
    const inner = DirPackageSource.open(built.dir);
    const evil: PackageSource = {
      manifestHash: inner.manifestHash,
      manifest: async () => Buffer.concat([Buffer.from(await inner.manifest()), Buffer.from(' ')]),
      pieceMap: (p) => inner.pieceMap(p),
      piece: (p, i) => inner.piece(p, i),
    };
    const { server, errors } = await placingHost();
    await place(server, evil).catch(() => {});
    expect((errors[0] as WireError).code).toBe('manifest_mismatch');
  });

  it('DirPackageSource refuses paths outside its envelope', async () => {
    const built = await buildPackage(1000);
    const source = DirPackageSource.open(built.dir);
    await expect(source.pieceMap('../etc/passwd')).rejects.toThrow(/not a file of this package/);
    await expect(source.piece('heddle-package.json', 0)).rejects.toThrow(/not a file of this package/);
    expect(existsSync(built.dir)).toBe(true);
  });
});
