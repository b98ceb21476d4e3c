import { errorMessage, parseJson } from '@heddle/envelope';
import { COG_ARCHES, COG_ROUTES, parseVariantName } from '@heddle/model';
import { z } from 'zod';
import {
  type CogConsoleCommand,
  CogConsoleSchema,
  CogIdSchema,
  type CogResources,
  CogResourcesSchema,
  CogSourceUrlSchema,
  CogVersionSchema,
} from './cog.js';
import { type CogConfigSchema, CogConfigSchemaSchema } from './cog-config.js';
import { PackageError, zodIssue } from './errors.js';
import { MAX_FILES } from './limits.js';
import { packagePathProblem } from './paths.js';

/** The file name of a cog's source manifest. */
export const COG_SOURCE_FILE = 'cog.json';

/** Largest accepted source manifest: 256 KiB. */
export const MAX_COG_SOURCE_BYTES: number = 256 * 1024;

/**
 * A cog's source manifest (`cog.json`): what `heddle pkg build` turns into a package. Variants map a
 * `<arch>-<route>` name to a file path relative to the source directory; `files` lists extra files.
 */
export interface CogSource {
  id: string;
  version: string;
  variants: Record<string, string>;
  files?: string[];
  config?: CogConfigSchema;
  console?: CogConsoleCommand[];
  resources: CogResources;
  source?: string;
  redistributable?: boolean;
}

const pathSchema = z
  .string()
  .max(255)
  .superRefine((p, ctx) => {
    const problem = packagePathProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Schema of `cog.json`. */
export const CogSourceSchema: z.ZodType<CogSource> = z
  .strictObject({
    id: CogIdSchema,
    version: CogVersionSchema,
    variants: z.record(z.string(), pathSchema),
    files: z.array(pathSchema).max(MAX_FILES).exactOptional(),
    config: CogConfigSchemaSchema.exactOptional(),
    console: CogConsoleSchema.exactOptional(),
    resources: CogResourcesSchema,
    source: CogSourceUrlSchema.exactOptional(),
    redistributable: z.boolean().exactOptional(),
  })
  .superRefine((src, ctx) => {
    const names = Object.keys(src.variants);
    if (names.length === 0)
      ctx.addIssue({ code: 'custom', message: 'at least one variant is required', path: ['variants'] });
    for (const name of names) {
      if (!parseVariantName(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `variant names are <arch>-<route> with arch one of ${COG_ARCHES.join(', ')} and route one of ${COG_ROUTES.join(', ')} (wasi only with wasm32)`,
          path: ['variants', name],
        });
      }
    }
  });

/** Parses `cog.json` text strictly. Throws `source_invalid` naming the field. */
export function parseCogSource(text: string): CogSource {
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: MAX_COG_SOURCE_BYTES });
  } catch (err) {
    throw new PackageError('source_invalid', `${COG_SOURCE_FILE}: ${errorMessage(err)}`, {
      field: '$',
      cause: err,
    });
  }
  const r = CogSourceSchema.safeParse(value);
  if (!r.success) {
    const { field, message } = zodIssue(r.error);
    throw new PackageError('source_invalid', `${COG_SOURCE_FILE}: ${message}`, { field });
  }
  return r.data;
}

/** A starting `cog.json` for `heddle pkg init`. */
export function cogSourceTemplate(id = 'hello-cog'): CogSource {
  return {
    id,
    version: '0.1.0',
    variants: { 'x86_64-native': 'bin/run.sh', 'aarch64-native': 'bin/run.sh' },
    config: {
      interval_secs: { type: 'integer', min: 1, max: 3600, default: 10, description: 'seconds between runs' },
    },
    console: [{ name: 'status', description: 'print a status line' }],
    resources: { cpu_pct: 10, ram_mb: 32 },
  };
}
