// A host whose package store fills up during a package fetch (docs/protocol.md, refusal `no_space`):
// a real small filesystem (tmpfs, mounted as root at the host's packages directory), a real host
// behind a WebSocket server on 127.0.0.1, a real control plane, and a package larger than the room
// left. Skipped with a message when not root (CI runs as root).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCogPackage } from '@heddle/package';
import { refusalKind } from '@heddle/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openPlane,
  publisherKeys,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

const ROOT = process.getuid?.() === 0;
if (!ROOT) console.warn('disk-full.test.ts: skipped: mounting a small tmpfs needs root (CI runs as root)');

const mounts: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
});

/** wasi-cog with an extra file of `bytes` random bytes (`data.bin`), built and signed. */
async function bigPackage(bytes: number): Promise<string> {
  const src = join(tempDir('heddle-df-src-'), 'src');
  cpSync(resolve(import.meta.dirname, '../../../examples/wasi-cog'), src, { recursive: true });
  const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8')) as Record<string, unknown>;
  cog.version = `2.0.${bytes}`;
  cog.files = ['data.bin'];
  writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
  writeFileSync(
    join(src, 'data.bin'),
    Buffer.alloc(bytes, 7).map((_, i) => (i * 2654435761) >>> 24),
  );
  const out = join(tempDir('heddle-df-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [publisherKeys] });
  return out;
}

/** A host whose packages directory is a tmpfs of `size` (e.g. `4m`). */
async function hostOnTmpfs(
  size: string,
  seed?: number,
): Promise<{ host: TestHost; packages: string; dataDir: string }> {
  const dataDir = tempDir('heddle-df-host-');
  const packages = join(dataDir, 'packages');
  mkdirSync(packages, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', packages]);
  mounts.push(packages);
  const host = await startHost(['wasi'], seed, 0, { dataDir });
  open.push(host);
  return { host, packages, dataDir };
}

describe.skipIf(!ROOT)('disk full mid-transfer', () => {
  it('refuses the place with no_space, keeps nothing, keeps running, and places again once space is freed', async () => {
    const { host, packages, dataDir } = await hostOnTmpfs('4m');
    // 2.5 MiB taken by something else: a 3 MiB package does not fit in what is left.
    writeFileSync(join(packages, 'filler'), Buffer.alloc(2_621_440, 1));
    const pkg = await bigPackage(3 * 1_048_576);
    const p: TestPlane = await openPlane(undefined, { placeTimeoutMs: 60_000 });
    open.push(p);
    await p.plane.addNode(host.url, { tier: 'paired' });
    const order = { package_dir: pkg, mode: { type: 'interval' as const, secs: 60 }, start: true };
    const refused = await p.plane.place({ ...order, node: host.service.nodeId }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(Error);
    const chain = readFileSync(join(p.dir, 'chain.jsonl'), 'utf8');
    const attempt = chain
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; payload: Record<string, unknown> })
      .find((e) => e.payload?.outcome === 'refused');
    expect(attempt?.payload).toMatchObject({ outcome: 'refused', code: 'no_space' });
    expect(String(attempt?.payload.reason)).toContain('ENOSPC');
    // The fault landed during the transfer: pieces before it were written (a piece past the first failed).
    expect(String(attempt?.payload.reason)).toMatch(/data\.bin piece [1-9]\d*: ENOSPC/);
    // The host chained its refusal.
    const hostChain = readFileSync(join(dataDir, 'chain.jsonl'), 'utf8');
    expect(hostChain).toContain('"code":"no_space"');
    // Determinate: an authenticated refusal of a place is Refused, never Indeterminate.
    expect(
      refusalKind('workload.place', { authenticated: true, code: 'no_space', reason: '', status: 'refused' }),
    ).toBe('refused');
    // Nothing half-written: only the filler is left on the filesystem, no incoming directory.
    expect(readdirSync(packages)).toEqual(['filler']);
    expect(p.plane.instances()).toEqual([]);
    // Still running: it answers a describe.
    const [n] = await p.plane.refreshNodes();
    expect(n?.last_error).toBeNull();
    // Space freed: the same order is placed.
    rmSync(join(packages, 'filler'));
    const r = await p.plane.place({ ...order, node: host.service.nodeId });
    expect(r.status).toBe('placed');
    expect(r.instance?.node_id).toBe(host.service.nodeId);
    const held = readdirSync(packages);
    expect(held).toHaveLength(1);
    expect(statSync(join(packages, held[0] as string)).isDirectory()).toBe(true);
  });

  it('the controller places elsewhere: a full host refuses, a roomy one takes it', async () => {
    const full = await hostOnTmpfs('1m', 0x11);
    const roomy = await hostOnTmpfs('16m', 0x12);
    const pkg = await bigPackage(2 * 1_048_576);
    const p: TestPlane = await openPlane(undefined, { placeTimeoutMs: 60_000 });
    open.push(p);
    await p.plane.addNode(full.host.url, { tier: 'paired' });
    await p.plane.addNode(roomy.host.url, { tier: 'paired' });
    const r = await p.plane.place({ package_dir: pkg, mode: { type: 'interval', secs: 60 }, start: true });
    expect(r.status).toBe('placed');
    expect(r.instance?.node_id).toBe(roomy.host.service.nodeId);
    // The full host ranks first (fixed keys: the engine breaks the tie by node id): it was tried, refused determinately, and the
    // place went on to the next candidate without reconciling.
    expect(r.attempts.map((a) => [a.node_id, a.outcome, a.code])).toEqual([
      [full.host.service.nodeId, 'refused', 'no_space'],
      [roomy.host.service.nodeId, 'placed', null],
    ]);
    expect(readdirSync(full.packages)).toEqual([]);
  });
});
