import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { errorMessage } from '@heddle/cli-kit';
import { firstZodIssue, makeDirs, parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { FINGERPRINT_RE } from '@heddle/operator-api';
import { z } from 'zod';
import { badInput } from './cli-error.js';

/** The `schema` of the contexts file. */
export const CONTEXTS_SCHEMA = 'heddle.contexts.v1';

export { ADDR_ENV, CONTEXT_ENV } from './home.js';
/** The environment variable naming the directory of the contexts file. */
export const CONFIG_DIR_ENV = 'HEDDLE_CONFIG_DIR';

/** A named way to reach a controller: its URL, the pinned certificate, and the credential. */
export interface ContextEntry {
  readonly name: string;
  /** `https://host:port` (or `http://127.0.0.1:port`). */
  readonly url: string;
  /** The pinned certificate fingerprint (`sha256:<hex>`); without it, the CA chain and host name are checked. */
  readonly fingerprint?: string | undefined;
  /** An operator key file (Ed25519, `heddle keygen`): every request is signed with it. */
  readonly key_file?: string | undefined;
  /** A file holding a bearer token (an operator token, or a home's api.token). */
  readonly token_file?: string | undefined;
}

/** The contexts file. */
export interface ContextsFile {
  readonly schema: typeof CONTEXTS_SCHEMA;
  readonly current: string | null;
  readonly contexts: readonly ContextEntry[];
}

/** A context's name: 1..64 of `a-z A-Z 0-9 . _ -`. */
export const ContextNameSchema: z.ZodType<string> = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'expected 1..64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)',
  );

const Path = z.string().min(1).max(4096);

/** Schema of one context: a URL and exactly one credential. */
export const ContextEntrySchema: z.ZodType<ContextEntry> = z
  .strictObject({
    name: ContextNameSchema,
    url: z.string().regex(/^https?:\/\/[^/\s?#]{1,300}$/, 'expected http(s)://<host>:<port> with no path'),
    fingerprint: z.string().regex(FINGERPRINT_RE, 'expected sha256:<64 lower-case hex>').optional(),
    key_file: Path.optional(),
    token_file: Path.optional(),
  })
  .refine((c) => (c.key_file === undefined) !== (c.token_file === undefined), {
    message: 'give exactly one of key_file and token_file',
    path: ['key_file'],
  });

/** Schema of {@link ContextsFile}: names unique, `current` one of them. */
export const ContextsFileSchema: z.ZodType<ContextsFile> = z
  .strictObject({
    schema: z.literal(CONTEXTS_SCHEMA, { error: `expected "${CONTEXTS_SCHEMA}"` }),
    current: ContextNameSchema.nullable(),
    contexts: z.array(ContextEntrySchema).max(1000),
  })
  .superRefine((f, ctx) => {
    const names = new Set<string>();
    f.contexts.forEach((c, i) => {
      if (names.has(c.name))
        ctx.addIssue({ code: 'custom', path: ['contexts', i, 'name'], message: 'given twice' });
      names.add(c.name);
    });
    if (f.current !== null && !names.has(f.current))
      ctx.addIssue({ code: 'custom', path: ['current'], message: 'names no context' });
  });

/**
 * Where the contexts file is: `$HEDDLE_CONFIG_DIR/contexts.json`, else
 * `$XDG_CONFIG_HOME/heddle/contexts.json`, else `~/.config/heddle/contexts.json`.
 */
export function contextsPath(env: Readonly<Record<string, string | undefined>>): string {
  const dir = env[CONFIG_DIR_ENV];
  if (dir !== undefined && dir !== '') return join(dir, 'contexts.json');
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' ? xdg : join(env.HOME ?? homedir(), '.config');
  return join(base, 'heddle', 'contexts.json');
}

const EMPTY: ContextsFile = { schema: CONTEXTS_SCHEMA, current: null, contexts: [] };

/** Reads the contexts file (missing: none). Throws `CliError` `contexts_invalid` (exit 3) naming the field. */
export function readContexts(path: string): ContextsFile {
  let text: string;
  try {
    text = readTextBounded(path, 1024 * 1024);
  } catch (err) {
    if (err instanceof Error && Reflect.get(err, 'code') === 'ENOENT') return EMPTY;
    throw badInput('contexts_invalid', `cannot read ${path}: ${errorMessage(err)}`, '$', err);
  }
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: 1024 * 1024 });
  } catch (err) {
    throw badInput('contexts_invalid', `${path}: not valid JSON: ${errorMessage(err)}`, '$', err);
  }
  const r = ContextsFileSchema.safeParse(value);
  if (!r.success) {
    const issue = firstZodIssue(r.error);
    throw badInput('contexts_invalid', `${path}: ${issue.field}: ${issue.message}`, issue.field);
  }
  return r.data;
}

/** Writes the contexts file crash-safely, mode 0600 (its directory 0700). */
export function writeContexts(path: string, file: ContextsFile): void {
  makeDirs(dirname(path), 0o700);
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}
