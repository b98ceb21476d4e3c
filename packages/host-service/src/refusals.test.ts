import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { CallFailure } from '@heddle/protocol';
import { hostCogArch } from '@heddle/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuiltPackage,
  buildPackage,
  call,
  helloPackage,
  helloSource,
  operatorKeys,
  placeBody,
  publisherKeys,
  request,
  startHost,
  strangerKeys,
  type TestHost,
  trail,
  wasiPackage,
} from './test-fixtures.js';

const ARCH = hostCogArch() ?? 'x86_64';
const NATIVE = `${ARCH}-native`;
let host: TestHost;
let pkg: BuiltPackage;
let wasi: BuiltPackage;

beforeAll(async () => {
  host = await startHost();
  pkg = await helloPackage();
  wasi = await wasiPackage();
});
afterAll(async () => {
  await host.close();
});

/** The refusal a call got (fails the test when it succeeded or failed otherwise). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; reason: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CallFailure && err.code === 'refused' && err.refusal !== undefined) {
      return { code: err.refusal.code, reason: err.refusal.reason };
    }
    throw err;
  }
  throw new Error('the call succeeded');
}

const place = (body: Record<string, unknown>, pkgDir?: string) =>
  call(host.url, request('workload.place', body as never), pkgDir === undefined ? {} : { pkgDir });

describe('refusals of verified requests, each with its code and the field named', () => {
  it.each([
    [{ ...placeBody('0'.repeat(64), NATIVE), variant: 'native' }, 'body.variant'],
    [{ ...placeBody('xyz', NATIVE) }, 'body.manifest_hash'],
    [placeBody('0'.repeat(64), NATIVE, { mode: { type: 'interval', secs: 0 } }), 'body.config.mode'],
    [{ ...placeBody('0'.repeat(64), NATIVE), extra: 1 }, 'body'],
    [placeBody('0'.repeat(64), NATIVE, { name: '../etc' }), 'body.name'],
    [{ ...placeBody('0'.repeat(64), 'x86_64-kvm') }, 'body.variant'],
    // a known route after an unknown arch, and a route that does not go with its arch
    [{ ...placeBody('0'.repeat(64), 'mips-native') }, 'body.variant'],
    [{ ...placeBody('0'.repeat(64), 'wasm32-native') }, 'body.variant'],
  ])('invalid_request for a bad place body %#', async (body, field) => {
    const r = await refusal(place(body));
    expect(r.code).toBe('invalid_request');
    expect(r.reason).toContain(field);
  });

  it('a load that asks to start is refused', async () => {
    const r = await refusal(
      call(host.url, request('workload.load', placeBody(pkg.manifestHash, NATIVE, { start: true }))),
    );
    expect(r).toMatchObject({ code: 'invalid_request', reason: expect.stringContaining('body.start') });
  });

  it('admission: no adapter for the route', async () => {
    const r = await refusal(place(placeBody(pkg.manifestHash, `${ARCH}-container`), pkg.dir));
    expect(r).toMatchObject({ code: 'admission', reason: expect.stringContaining('no container adapter') });
  });

  it('admission: the variant is not the one this node runs', async () => {
    const other = ARCH === 'x86_64' ? 'aarch64-native' : 'x86_64-native';
    const r = await refusal(place(placeBody(pkg.manifestHash, other), pkg.dir));
    expect(r).toMatchObject({ code: 'admission', reason: expect.stringContaining(`not ${other}`) });
  });

  it('invalid_request: the package has no such variant', async () => {
    const r = await refusal(place(placeBody(pkg.manifestHash, 'riscv64-native'), pkg.dir));
    expect(r).toMatchObject({
      code: 'invalid_request',
      reason: expect.stringContaining('no native variant riscv64-native'),
    });
  });

  it('verify: the package id differs from the placed name', async () => {
    const r = await refusal(place(placeBody(pkg.manifestHash, NATIVE, { name: 'other-cog' }), pkg.dir));
    expect(r).toMatchObject({
      code: 'verify',
      reason: expect.stringContaining('differs from the placed name'),
    });
  });

  it('a refused place keeps no package it brought in', async () => {
    const fresh = await buildPackage(helloSource());
    const r = await refusal(place(placeBody(fresh.manifestHash, NATIVE, { name: 'other-cog' }), fresh.dir));
    expect(r.code).toBe('verify');
    expect(existsSync(join(host.dataDir, 'packages', fresh.manifestHash))).toBe(false);
  });

  it('verify: signed by a key this node does not pin', async () => {
    const unpinned = await helloPackage(strangerKeys);
    const r = await refusal(place(placeBody(unpinned.manifestHash, NATIVE), unpinned.dir));
    expect(r).toMatchObject({ code: 'verify', reason: expect.stringContaining('untrusted_signer') });
  });

  it('verify: a file changed after signing (the controller serves bytes that do not hash to the manifest)', async () => {
    const tampered = await buildPackage(helloSource());
    writeFileSync(join(tampered.dir, 'bin', 'hello.sh'), '#!/bin/sh\necho pwned\n');
    const r = await refusal(place(placeBody(tampered.manifestHash, NATIVE), tampered.dir));
    expect(r.code).toBe('verify');
    expect(host.service.instanceIds()).toEqual([]);
  });

  it('fetch: the controller offers no package on this call', async () => {
    const fresh = await buildPackage(helloSource());
    const r = await refusal(place(placeBody(fresh.manifestHash, NATIVE)));
    expect(r).toMatchObject({ code: 'fetch', reason: expect.stringContaining('not_offered') });
  });

  it('unknown_instance, naming a departed one', async () => {
    const r = await refusal(
      call(host.url, request('workload.start', { instance_id: `hello-cog-${'0'.repeat(16)}` })),
    );
    expect(r).toMatchObject({
      code: 'unknown_instance',
      reason: expect.stringContaining('is not placed on this node'),
    });
    const placed = (await place(placeBody(wasi.manifestHash, 'wasm32-wasi'), wasi.dir)).result as {
      instance_id: string;
    };
    await call(host.url, request('workload.unload', { instance_id: placed.instance_id }));
    const gone = await refusal(call(host.url, request('workload.stop', { instance_id: placed.instance_id })));
    expect(gone).toMatchObject({ code: 'unknown_instance', reason: expect.stringContaining('was unloaded') });
  });

  it('every refusal of a verified request is chained with its code, method and decision id', async () => {
    const from = host.chain.size;
    await refusal(call(host.url, request('workload.unload', { instance_id: `hello-cog-${'1'.repeat(16)}` })));
    const refused = host.chain
      .range(from)
      .filter((e) => e.kind === 'workload.refuse' && e.source === 'workload.host');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.payload).toMatchObject({
      code: 'unknown_instance',
      method: 'workload.unload',
      authenticated: true,
      decision_id: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });
});

describe('revocations', () => {
  it('verify: a revoked signer is refused before anything loads', async () => {
    const revoking = await startHost();
    try {
      const list = RevocationList.empty().add(
        {
          kind: 'signer',
          ref: toHex(publisherKeys.publicKey),
          revokedAtMs: Date.now(),
          reason: 'key leaked',
        },
        operatorKeys,
      );
      revoking.holder.replace(list);
      const r = await refusal(
        call(revoking.url, request('workload.place', placeBody(pkg.manifestHash, NATIVE) as never), {
          pkgDir: pkg.dir,
        }),
      );
      expect(r).toMatchObject({ code: 'verify', reason: expect.stringContaining('revoked') });
      expect(trail(revoking.chain)).not.toContain('workload.runtime workload.load');
    } finally {
      await revoking.close();
    }
  });

  it('a placed instance is torn down when a reloaded list revokes it, and reported departed', async () => {
    const dir = join(host.dataDir, 'revocations.json');
    const listed = await startHost({ revocationPath: dir });
    try {
      const placed = (
        await call(
          listed.url,
          request('workload.place', placeBody(wasi.manifestHash, 'wasm32-wasi') as never),
          {
            pkgDir: wasi.dir,
          },
        )
      ).result as { package_id: string; instance_id: string };
      RevocationList.empty()
        .add({ kind: 'package', ref: placed.package_id, revokedAtMs: Date.now() }, operatorKeys)
        .save(dir);
      expect(await listed.service.reloadRevocations()).toEqual([placed.instance_id]);
      const status = (await call(listed.url, request('workload.status', { include_departed: true }))).result;
      expect(status).toMatchObject({
        instances: [],
        departed: [{ instance_id: placed.instance_id, reason: 'revoked' }],
      });
      const stop = listed.chain
        .range(0)
        .find((e) => e.kind === 'workload.unload' && e.source === 'workload.runtime');
      expect(stop?.payload).toMatchObject({ forced_by_revocation: expect.anything() });
    } finally {
      await listed.close();
    }
  });
});
