import { COG_ARCHES, COG_ROUTES, type CogArch, type CogRoute, routeFitsArch } from '@heddle/model';
import { z } from 'zod';
import { type CogConfigSchema, CogConfigSchemaSchema } from './cog-config.js';
import { type PackageFile, PackageFileSchema } from './format.js';
import { type KindDefinition, KindRegistry } from './kind-registry.js';
import { MAX_FILES } from './limits.js';
import { pathListProblem } from './paths.js';

/** One variant of a cog: its route, its architecture and the file the route runs. */
export interface CogVariant {
  route: CogRoute;
  arch: CogArch;
  /** Path of one of the body's files. */
  file: string;
}

/** A console command a cog accepts (run with the sensor feed to itself). */
export interface CogConsoleCommand {
  /** Command name, `[a-z][a-z0-9_-]{0,31}`. */
  name: string;
  /** What it does, for operators. */
  description?: string;
}

/** What a cog needs: CPU percent of one core (1..6400) and memory in MiB (1..1048576). */
export interface CogResources {
  cpu_pct: number;
  ram_mb: number;
}

/** The body of a `cog` package (docs/package-format.md, section 5). */
export interface CogBody {
  /** Cog id, `[a-z0-9][a-z0-9._-]{0,63}`. */
  id: string;
  /** Version, semantic-version shaped (`1.2.3` or `1.2.3-beta.1`). */
  version: string;
  /** Variant name (`<arch>-<route>`) to variant. At least one. */
  variants: Record<string, CogVariant>;
  /** Every file of the package. */
  files: PackageFile[];
  /** Config schema: field name to type, bounds and default. */
  config: CogConfigSchema;
  /** Console commands. */
  console: CogConsoleCommand[];
  /** Resources the cog needs. */
  resources: CogResources;
  /** Where the source lives (a URL or free text, at most 512 characters). */
  source?: string;
  /** Whether hosts may serve this package to other hosts. */
  redistributable?: boolean;
}

/** A cog id: `[a-z0-9][a-z0-9._-]{0,63}`. */
export const COG_ID_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A version: `MAJOR.MINOR.PATCH` with an optional `-prerelease` (`[0-9A-Za-z.-]`), at most 64 characters. */
export const VERSION_RE: RegExp =
  /^(?:0|[1-9][0-9]{0,8})\.(?:0|[1-9][0-9]{0,8})\.(?:0|[1-9][0-9]{0,8})(?:-[0-9A-Za-z.-]{1,32})?$/;

/** Schema of a cog id (shared by the body and `cog.json`). */
export const CogIdSchema: z.ZodType<string> = z
  .string()
  .regex(COG_ID_RE, 'expected a cog id matching [a-z0-9][a-z0-9._-]{0,63}');

/** Schema of a version (shared by the body and `cog.json`). */
export const CogVersionSchema: z.ZodType<string> = z
  .string()
  .regex(VERSION_RE, 'expected a version such as 1.2.3 or 1.2.3-beta.1');

/** Schema of the console commands, at most 64 (shared by the body and `cog.json`). */
export const CogConsoleSchema: z.ZodType<CogConsoleCommand[]> = z
  .array(
    z.strictObject({
      name: z
        .string()
        .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'expected a command name matching [a-z][a-z0-9_-]{0,31}'),
      description: z.string().max(200).exactOptional(),
    }),
  )
  .max(64);

/** Schema of the resources (shared by the body and `cog.json`). */
export const CogResourcesSchema: z.ZodType<CogResources> = z.strictObject({
  cpu_pct: z.int().min(1).max(6400),
  ram_mb: z.int().min(1).max(1048576),
});

/** Schema of the optional `source` (shared by the body and `cog.json`). */
export const CogSourceUrlSchema: z.ZodType<string> = z.string().min(1).max(512);

const variantSchema = z.strictObject({
  route: z.enum(COG_ROUTES),
  arch: z.enum(COG_ARCHES),
  file: z.string().min(1).max(255),
});

const filesSchema = z
  .array(PackageFileSchema)
  .min(1)
  .max(MAX_FILES)
  .superRefine((files, ctx) => {
    const problem = pathListProblem(files.map((f) => f.path));
    if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: [problem.index, 'path'] });
  });

/** Schema of a cog body, with the cross-field rules: variant names are `<arch>-<route>`, the `wasi` route
 * goes with `wasm32` and only with it, and every variant's file is one of the files. */
export const CogBodySchema: z.ZodType<CogBody> = z
  .strictObject({
    id: CogIdSchema,
    version: CogVersionSchema,
    variants: z.record(z.string(), variantSchema),
    files: filesSchema,
    config: CogConfigSchemaSchema,
    console: CogConsoleSchema,
    resources: CogResourcesSchema,
    source: CogSourceUrlSchema.exactOptional(),
    redistributable: z.boolean().exactOptional(),
  })
  .superRefine((body, ctx) => {
    const names = Object.keys(body.variants);
    if (names.length === 0)
      ctx.addIssue({ code: 'custom', message: 'at least one variant is required', path: ['variants'] });
    if (names.length > 16)
      ctx.addIssue({ code: 'custom', message: 'at most 16 variants', path: ['variants'] });
    const paths = new Set(body.files.map((f) => f.path));
    for (const [name, v] of Object.entries(body.variants)) {
      if (name !== `${v.arch}-${v.route}`) {
        ctx.addIssue({
          code: 'custom',
          message: `variant name must be ${v.arch}-${v.route} (<arch>-<route>)`,
          path: ['variants', name],
        });
      }
      if (!routeFitsArch(v.arch, v.route)) {
        ctx.addIssue({
          code: 'custom',
          message: 'the wasi route goes with arch wasm32 and only with it',
          path: ['variants', name, 'route'],
        });
      }
      if (!paths.has(v.file)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(v.file)} is not one of the files`,
          path: ['variants', name, 'file'],
        });
      }
    }
    const commands = body.console.map((c) => c.name);
    if (new Set(commands).size !== commands.length) {
      ctx.addIssue({ code: 'custom', message: 'console command names must be unique', path: ['console'] });
    }
  });

/** The built-in `cog` kind. */
export const cogKind: KindDefinition<CogBody> = {
  kind: 'cog',
  bodySchema: CogBodySchema,
  files: (body) => body.files,
  describe: (body) => [
    `cog ${body.id} ${body.version}`,
    `variants: ${Object.keys(body.variants).sort().join(', ')}`,
    `resources: cpu ${body.resources.cpu_pct}%, ram ${body.resources.ram_mb} MiB`,
    ...(body.console.length > 0 ? [`console: ${body.console.map((c) => c.name).join(', ')}`] : []),
  ],
};

/** A new registry holding the built-in kinds (`cog`). Register more kinds on it as needed. */
export function defaultKindRegistry(): KindRegistry {
  return new KindRegistry().register(cogKind);
}
