import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';
import { PlacementError } from './errors.js';
import { parseOrThrow } from './parse.js';
import type { PlacementRequest, RequestResources, RequestVariant } from './request.js';
import type { Requirement } from './requirement.js';

/**
 * The part of a cog package body placement reads (structural: `@heddle/package` is not imported).
 * `variants` maps a name (`aarch64-native`) to its route, architecture and file; `os` is an optional
 * refinement for native variants (when absent: Linux or macOS, or macOS only if the arch names
 * Darwin/Apple/macOS).
 */
export interface CogSpecInput {
  /** Variants by name. */
  readonly variants: Readonly<
    Record<
      string,
      {
        readonly route: string;
        readonly arch: string;
        readonly file: string;
        readonly os?: 'linux' | 'macos';
      }
    >
  >;
  /** Resources the cog takes. */
  readonly resources: { readonly cpu_pct: number; readonly ram_mb: number };
  /** Lowest operator trust tier it may run on. */
  readonly min_tier?: NodeTier;
}

/** What a cog needs, as the engine reads it. */
export interface CogRequirements {
  /** One request variant per route alternative (a container variant yields a native and an emulated one). */
  readonly variants: readonly RequestVariant[];
  /** Memory and CPU. */
  readonly resources: RequestResources;
  /** Minimum tier. */
  readonly min_tier: NodeTier;
}

/** Schema of {@link CogSpecInput} (extra body fields are ignored, the named ones checked). */
export const CogSpecInputSchema: z.ZodType<CogSpecInput> = z.object({
  variants: z
    .record(
      z.string().min(1).max(128),
      z.object({
        route: z.string().min(1).max(64),
        arch: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[A-Za-z0-9_-]+$/, 'expected an architecture name such as aarch64'),
        file: z.string().min(1).max(4096),
        os: z.enum(['linux', 'macos']).exactOptional(),
      }),
    )
    .refine((v) => Object.keys(v).length > 0, 'at least one variant is required'),
  resources: z.object({
    cpu_pct: z
      .int()
      .min(0)
      .max(1 << 20),
    ram_mb: z
      .int()
      .min(0)
      .max(1 << 30),
  }),
  min_tier: z.enum(NODE_TIERS).exactOptional(),
});

const ARCH_ALIASES: Readonly<Record<string, string>> = { arm64: 'aarch64', amd64: 'x86_64', x64: 'x86_64' };

/** Normalises an architecture name for a capability id (`arm64` -> `aarch64`, `amd64` -> `x86_64`). */
export function normaliseArch(arch: string): string {
  const a = arch.toLowerCase();
  return ARCH_ALIASES[a] ?? a;
}

/** The OSes a native variant may run on: its `os`, macOS for a Darwin/Apple arch name, else both. */
function nativeOses(v: {
  readonly arch: string;
  readonly os?: 'linux' | 'macos';
}): readonly ('linux' | 'macos')[] {
  if (v.os !== undefined) return [v.os];
  if (/darwin|macos|apple/i.test(v.arch)) return ['macos'];
  return ['linux', 'macos'];
}

/**
 * Turns a cog's variants into the requirements of their routes:
 * - `native`: `cpu.arch.<arch>`, `os.linux` or `os.macos`, `runtime.native` (execution `native`). The
 *   requirement language has no OR, so a native variant without `os` yields two alternatives with the
 *   same name, one requiring `os.linux` (alternative `linux`) and one `os.macos` (alternative
 *   `macos`); `os` (or a Darwin/Apple arch name) restricts it to one (with no alternative label);
 * - `wasi`: `runtime.wasi` (execution `dev_fallback`, the portable build);
 * - `container`: a `runtime.container.*` whose `arches_native` has the arch (execution `native`,
 *   alternative `native`), and a second alternative whose `arches_emulated` has it (execution
 *   `emulated`, alternative `emulated`, used only when allowed);
 * plus the memory (`ram_mb`), CPU and minimum tier. Unknown routes are refused with `unknown_route`;
 * junk with `invalid_cog`, naming the field.
 */
export function cogRequirements(input: unknown): CogRequirements {
  const cog = parseOrThrow(CogSpecInputSchema, input, 'invalid_cog', 'cog spec');
  const variants: RequestVariant[] = [];
  for (const name of Object.keys(cog.variants).sort()) {
    const v = cog.variants[name]!;
    const arch = normaliseArch(v.arch);
    switch (v.route) {
      case 'native': {
        // The requirement language has no OR: "os.linux or os.macos" is two alternatives of the same
        // variant, one per OS (a node has one OS, so at most one of them fits it).
        const oses = nativeOses(v);
        for (const os of oses) {
          const reqs: Requirement[] = [
            { id: `cpu.arch.${arch}` },
            { id: `os.${os}` },
            { id: 'runtime.native' },
          ];
          variants.push({
            name,
            execution: 'native',
            requirements: reqs,
            ...(oses.length > 1 ? { alternative: os } : {}),
          });
        }
        break;
      }
      case 'wasi':
        variants.push({ name, execution: 'dev_fallback', requirements: [{ id: 'runtime.wasi' }] });
        break;
      case 'container':
        variants.push({
          name,
          execution: 'native',
          alternative: 'native',
          requirements: [
            { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: arch }] },
          ],
        });
        variants.push({
          name,
          execution: 'emulated',
          alternative: 'emulated',
          requirements: [
            { id_prefix: 'runtime.container', where: [{ attr: 'arches_emulated', op: 'has', value: arch }] },
          ],
        });
        break;
      default:
        throw new PlacementError(
          'unknown_route',
          `invalid cog spec: variants.${name}.route: unknown route ${JSON.stringify(v.route)}`,
          {
            field: `variants.${name}.route`,
          },
        );
    }
  }
  return {
    variants,
    resources: { memory_mb: cog.resources.ram_mb, cpu_pct: cog.resources.cpu_pct },
    min_tier: cog.min_tier ?? 'discovered',
  };
}

/** Options of {@link cogPlacementRequest}: the request fields a cog spec does not carry. */
export interface CogRequestOptions
  extends Pick<
    PlacementRequest,
    | 'workload'
    | 'package_id'
    | 'allow_emulation'
    | 'pin'
    | 'prefer'
    | 'avoid'
    | 'spread'
    | 'constraints'
    | 'previous_nodes'
  > {
  /** Raise the minimum tier above the cog's own (never lowers it). */
  readonly min_tier?: NodeTier;
}

/** A complete placement request for a cog (validated cog spec plus the caller's options). */
export function cogPlacementRequest(cog: unknown, options: CogRequestOptions): PlacementRequest {
  const r = cogRequirements(cog);
  const rank = (t: NodeTier): number => NODE_TIERS.indexOf(t);
  const minTier =
    options.min_tier !== undefined && rank(options.min_tier) > rank(r.min_tier)
      ? options.min_tier
      : r.min_tier;
  const { min_tier: _ignored, ...rest } = options;
  return { ...rest, variants: r.variants, resources: r.resources, min_tier: minTier };
}
