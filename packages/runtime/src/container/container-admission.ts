import type { Admission } from '../contract.js';
import { RuntimeError } from '../errors.js';
import type { RuntimeWorkload } from '../workload.js';
import {
  type ContainerEngine,
  cogArchOfOci,
  detectEmulatedArches,
  type EngineResult,
  type EngineVersion,
  parseEngineVersion,
  runEngine,
  runEngineOk,
} from './container-engine.js';
import { type ContainerImageRef, readImageRefFile } from './container-image-ref.js';
import { parseJsonRecords } from './container-inspect.js';

/** What the engine said about itself: version, arch, and the arches it can emulate. */
export type ContainerProbe = EngineVersion & { emulated: string[] };

/** The container variant admission chose, and its image reference. */
export interface ContainerChoice {
  readonly admission: Admission;
  readonly imageRef: ContainerImageRef;
}

/**
 * The container adapter's admission: a signed package (store pins are refused), an engine that
 * answers, and an `<arch>-container` variant of the engine's arch, else one the engine emulates
 * (`emulated: true`), whose file is the package's image reference. `probe` is asked only once the
 * source and engine are known good. Every refusal is `admission`.
 */
export async function chooseContainerVariant(
  workload: RuntimeWorkload,
  runtime: string,
  engine: ContainerEngine | undefined,
  probe: () => Promise<ContainerProbe | undefined>,
  allowNetwork: boolean,
): Promise<ContainerChoice> {
  const src = workload.source;
  if (src.type !== 'package')
    throw new RuntimeError(
      'admission',
      'source: the container adapter runs signed packages, not store pins',
      {
        field: 'source',
      },
    );
  if (engine === undefined)
    throw new RuntimeError('admission', 'engine: no container engine (docker or podman) found on PATH', {
      field: 'engine',
    });
  const p = await probe();
  if (p === undefined)
    throw new RuntimeError(
      'admission',
      `engine: ${engine.bin} did not answer "version" (is its daemon running?)`,
      {
        field: 'engine',
      },
    );
  const variants = Object.entries(src.verified.body.variants).filter(([, v]) => v.route === 'container');
  if (variants.length === 0)
    throw new RuntimeError('admission', `variants: ${workload.id} has no <arch>-container variant`, {
      field: 'variants',
    });
  const native = variants.find(([, v]) => v.arch === p.arch);
  const emulated = native === undefined ? variants.find(([, v]) => p.emulated.includes(v.arch)) : undefined;
  const pick = native ?? emulated;
  if (pick === undefined)
    throw new RuntimeError(
      'admission',
      `variants: no container variant for ${p.arch}${p.emulated.length > 0 ? ` or emulated ${p.emulated.join(', ')}` : ''} (package has ${variants.map(([n]) => n).join(', ')})`,
      { field: 'variants' },
    );
  const [name, variant] = pick;
  const file = src.verified.files.find((f) => f.path === variant.file);
  if (file === undefined)
    throw new RuntimeError(
      'admission',
      `variants.${name}.file: ${variant.file} is not a file of the package`,
      {
        field: `variants.${name}.file`,
      },
    );
  const imageRef = readImageRefFile(file.absolutePath, file.blake3);
  const notes = [`image ${imageRef.image}`, `engine ${engine.kind} ${p.version} (${p.arch})`];
  if (native === undefined) notes.push(`emulated: ${variant.arch} image on a ${p.arch} engine`);
  if (imageRef.network && !allowNetwork)
    notes.push('network: the package asks for network; the host policy does not allow it (runs with none)');
  return {
    admission: { runtime, variant: name, arch: variant.arch, emulated: native === undefined, notes },
    imageRef,
  };
}

/**
 * Makes sure the image is present (`image inspect`, else `pull` by digest within `pullTimeoutMs`) and
 * is for the variant's arch (`admission`, field `image`, otherwise).
 */
export async function ensureImage(
  engine: ContainerEngine,
  imageRef: ContainerImageRef,
  arch: string,
  pullTimeoutMs: number,
): Promise<void> {
  let r = await runEngine(engine, ['image', 'inspect', imageRef.image], { timeoutMs: 30_000 });
  if (r.code !== 0) {
    await runEngineOk(engine, ['pull', imageRef.image], { timeoutMs: pullTimeoutMs });
    r = await runEngineOk(engine, ['image', 'inspect', imageRef.image], { timeoutMs: 30_000 });
  }
  const img = parseJsonRecords(r.stdout)[0];
  const imgArch = typeof img?.Architecture === 'string' ? cogArchOfOci(img.Architecture) : undefined;
  if (imgArch !== arch)
    throw new RuntimeError(
      'admission',
      `image: ${imageRef.image} is for ${String(img?.Architecture)}, the variant says ${arch}`,
      { field: 'image' },
    );
}

/** The OCI arch name of a cog arch (`x86_64` is `amd64`), for `--platform linux/<arch>`. */
export function ociArch(arch: string): string {
  return arch === 'x86_64' ? 'amd64' : arch === 'aarch64' ? 'arm64' : arch === 'armv7' ? 'arm' : arch;
}

/**
 * Asks the engine for its version and arch (`version --format json`); the emulated arches are
 * `emulatedArches` when given, else detected from binfmt_misc handlers in `binfmtDir`. Undefined when
 * the engine does not answer.
 */
export async function probeContainerEngine(
  engine: ContainerEngine,
  emulatedArches: readonly string[] | undefined,
  binfmtDir: string | undefined,
): Promise<ContainerProbe | undefined> {
  let r: EngineResult;
  try {
    r = await runEngine(engine, ['version', '--format', 'json'], { timeoutMs: 10_000 });
  } catch {
    return undefined;
  }
  const v = parseEngineVersion(engine.kind, r.stdout);
  if (v === undefined) return undefined;
  const emulated =
    emulatedArches !== undefined
      ? [...emulatedArches].filter((a) => a !== v.arch).sort()
      : detectEmulatedArches(v.arch, binfmtDir);
  return { ...v, emulated };
}
