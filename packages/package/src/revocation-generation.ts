// The high-water mark of a revocation list's generation: a small file remembering the highest
// generation a host accepted, so that a validly signed older list put back is refused.
import { mkdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  canonicalJson,
  errnoCode,
  errorMessage,
  parseJson,
  readTextBounded,
  writeFileAtomic,
} from '@heddle/envelope';
import { z } from 'zod';
import { PackageError } from './errors.js';

/** Options of `RevocationList.save` (and the mark part of `RevocationList.load`). */
export interface SaveRevocationOptions {
  /**
   * The high-water mark file, by default `<path>.generation` (`false`: none). It holds
   * `{"generation":N,"schema":"heddle.revocation-generation.v1"}`, written crash-safely and only ever
   * raised: by `save`, and by `load` for every list it accepts with trusted keys (never with
   * `trustNamedSigners`). `load` refuses a list older than the mark with `revocation_rollback`, so a
   * validly signed older list put back (or the list deleted) fails closed. An unreadable or malformed
   * mark is `revocation_list_invalid`; a missing one means nothing was seen yet, so keep it where
   * whoever can replace the list cannot delete it.
   */
  readonly generationFile?: string | false;
}

/** The `schema` of a generation high-water mark file. */
export const REVOCATION_GENERATION_SCHEMA = 'heddle.revocation-generation.v1';

const GenerationMarkSchema = z.strictObject({
  schema: z.literal(REVOCATION_GENERATION_SCHEMA),
  generation: z.int().nonnegative(),
});

/** The mark file for the list at `path` under `options`, or undefined when disabled. */
export function generationFileOf(path: string, options: SaveRevocationOptions = {}): string | undefined {
  if (options.generationFile === false) return undefined;
  return options.generationFile ?? `${path}.generation`;
}

/**
 * The highest generation recorded in a mark file: 0 when it does not exist. Throws
 * `revocation_list_invalid` (naming the file) when it is unreadable or malformed.
 */
export function readGenerationMark(file: string): number {
  let text: string;
  try {
    text = readTextBounded(file, 256);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return 0;
    throw markError(file, `cannot read ${file}: ${errorMessage(err)}`, err);
  }
  try {
    return GenerationMarkSchema.parse(parseJson(text, { maxBytes: 4096 })).generation;
  } catch (err) {
    throw markError(file, `${file} is not a generation mark`, err);
  }
}

/** Records `generation` in the mark file crash-safely, creating its directory. Fails: `revocation_list_invalid`. */
export function writeGenerationMark(file: string, generation: number): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileAtomic(file, `${canonicalJson({ schema: REVOCATION_GENERATION_SCHEMA, generation })}\n`, {
      mode: 0o644,
    });
  } catch (err) {
    throw markError(file, `cannot record generation ${generation} in ${file}: ${errorMessage(err)}`, err);
  }
}

const markError = (file: string, message: string, cause: unknown): PackageError =>
  new PackageError('revocation_list_invalid', message, { field: basename(file), cause });

/** The `revocation_rollback` error: a list at `generation` while `seen` was seen (recorded in `file`). */
export const rollbackError = (generation: number, seen: number, file?: string): PackageError =>
  new PackageError(
    'revocation_rollback',
    `generation: ${generation} is older than the last generation seen (${seen}${file === undefined ? '' : `, recorded in ${file}`})`,
    { field: 'generation' },
  );
