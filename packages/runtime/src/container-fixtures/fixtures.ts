// Test helpers for the container adapter (not exported from the package): a signed cog package with
// container variants, and a fake engine state directory (see fake-engine.mjs).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { buildCogPackage, type CogBody, NO_REVOCATIONS, TrustAnchors, verifyPackage } from '@heddle/package';
import { type RuntimeWorkload, workloadFromPackage } from '../workload.js';

/** Path of the fake engine script, made executable. */
export function fakeEnginePath(): string {
  const p = join(dirname(fileURLToPath(import.meta.url)), 'fake-engine.mjs');
  chmodSync(p, 0o755);
  return p;
}

/** A fresh temporary directory. */
export function tempDir(prefix = 'heddle-ctr-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A digest made of one repeated hex character. */
export function digest(c: string): string {
  return `sha256:${c.repeat(64)}`;
}

/** A fake image: an entrypoint run by node (`script` is JavaScript), for arch `amd64` by default. */
export interface FakeImage {
  readonly script: string;
  readonly arch?: string;
  readonly env?: readonly string[];
}

/** A fake engine state: its directory, the env the adapter passes, and helpers. */
export interface FakeEngineState {
  readonly dir: string;
  readonly env: Record<string, string>;
  /** Adds a local image (`image inspect` finds it). */
  addImage(ref: string, image: FakeImage): void;
  /** Adds an image that only `pull` can fetch. */
  addRegistryImage(ref: string, image: FakeImage): void;
  /** Every argv the engine was called with. */
  calls(): string[][];
}

/** Creates a fake engine state directory. */
export function fakeEngineState(): FakeEngineState {
  const dir = tempDir('heddle-fake-engine-');
  const put = (file: string, ref: string, img: FakeImage): void => {
    const p = join(dir, file);
    let all: Record<string, unknown> = {};
    try {
      all = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
    } catch {}
    all[ref] = {
      Architecture: img.arch ?? 'amd64',
      Os: 'linux',
      Entrypoint: ['node', '-e', img.script, '--'],
      Env: [...(img.env ?? ['PATH=/usr/local/bin:/usr/bin:/bin'])],
    };
    writeFileSync(p, JSON.stringify(all));
  };
  return {
    dir,
    env: { FAKE_ENGINE_STATE: dir },
    addImage: (ref, img) => put('images.json', ref, img),
    addRegistryImage: (ref, img) => put('registry.json', ref, img),
    calls: () => {
      try {
        return readFileSync(join(dir, 'calls.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as string[]);
      } catch {
        return [];
      }
    },
  };
}

/** Options of {@link containerWorkload}. */
export interface ContainerCogOptions {
  /** Variant name to image-file content (default one `x86_64-container` variant). */
  readonly variants?: Readonly<Record<string, string>>;
  readonly ramMb?: number;
  readonly cpuPct?: number;
  readonly config?: CogBody['config'];
  readonly console?: CogBody['console'];
}

/** Builds, signs and verifies a cog package with container variants; returns its runtime view. */
export async function containerWorkload(
  image: string,
  options: ContainerCogOptions = {},
): Promise<RuntimeWorkload> {
  const src = tempDir('heddle-ctr-src-');
  const files = options.variants ?? { 'x86_64-container': JSON.stringify({ image }) };
  const variants: Record<string, string> = {};
  for (const [name, content] of Object.entries(files)) {
    const path = `images/${name}.json`;
    mkdirSync(join(src, 'images'), { recursive: true });
    writeFileSync(join(src, path), content);
    variants[name] = path;
  }
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id: 'ctr-cog',
      version: '1.0.0',
      variants,
      config: options.config ?? { rate: { type: 'integer', min: 1, max: 10, default: 2 } },
      console: options.console ?? [{ name: 'status' }],
      resources: { cpu_pct: options.cpuPct ?? 50, ram_mb: options.ramMb ?? 256 },
    }),
  );
  const keys = generateKeyPair();
  const out = join(tempDir(), 'pkg');
  await buildCogPackage(src, out, { keys: [keys] });
  const anchors = new TrustAnchors([{ id: 'k0', role: 'publisher', publicKey: toHex(keys.publicKey) }], 1);
  return workloadFromPackage(await verifyPackage<CogBody>(out, { anchors, revocations: NO_REVOCATIONS }));
}
