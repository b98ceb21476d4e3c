import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { KIND_RE, type PackageFile, PackageFileSchema } from './format.js';
import { MAX_FILES } from './limits.js';
import { pathListProblem } from './paths.js';

/**
 * A workload kind: how to validate its body and which files it lists. `cog` is built in; library users
 * register their own kinds with {@link KindRegistry.register}.
 */
export interface KindDefinition<B = unknown> {
  /** The kind name written in the envelope (`[a-z][a-z0-9-]{0,31}`). */
  readonly kind: string;
  /** Schema of the body. Use strict objects: unknown fields must be refused, not dropped. */
  readonly bodySchema: z.ZodType<B>;
  /**
   * The files of a valid body (each `{path, size, blake3}`); the verifier hashes exactly these. The
   * registry checks whatever this returns, for every kind, so a lax body schema cannot smuggle in a bad
   * path: each entry must match the file schema, each path `packagePathProblem`'s rules (no
   * traversal, no absolute path), no two paths may be equal ignoring case, and there may be at most
   * {@link MAX_FILES}. Errors about them name the field `body.files[i]`, `i` being the index in the
   * returned list.
   */
  files(body: B): readonly PackageFile[];
  /** Human summary lines for `heddle pkg inspect` (optional). */
  describe?(body: B): readonly string[];
}

/** A registry of workload kinds, consulted when an envelope is read. */
export class KindRegistry {
  readonly #kinds = new Map<string, KindDefinition<unknown>>();

  /**
   * Adds a kind. Throws `PackageError` `unknown_kind` when the name is malformed or already taken
   * (a kind is never silently replaced).
   */
  register<B>(definition: KindDefinition<B>): this {
    if (!KIND_RE.test(definition.kind)) {
      throw new PackageError('unknown_kind', `kind name ${JSON.stringify(definition.kind)} is malformed`, {
        field: 'kind',
      });
    }
    if (this.#kinds.has(definition.kind)) {
      throw new PackageError('unknown_kind', `kind ${definition.kind} is already registered`, {
        field: 'kind',
      });
    }
    // cast: a registry holds kinds of every body type; parseBody validates with the kind's own schema
    this.#kinds.set(definition.kind, definition as unknown as KindDefinition<unknown>);
    return this;
  }

  /** The definition of `kind`, or undefined. */
  get(kind: string): KindDefinition<unknown> | undefined {
    return this.#kinds.get(kind);
  }

  /** Registered kind names, sorted. */
  kinds(): string[] {
    return [...this.#kinds.keys()].sort();
  }

  /**
   * Validates `body` as `kind` and returns the typed body and its files (checked with
   * {@link checkPackageFiles}, whatever the kind). Throws `PackageError` `manifest_invalid` naming the
   * field (`kind`, `body.<path>`, or `body.files[i].<field>` for a file the kind returned).
   */
  parseBody(kind: string, body: unknown): { body: unknown; files: readonly PackageFile[] } {
    const def = this.#kinds.get(kind);
    if (!def) {
      throw new PackageError('manifest_invalid', `kind: ${JSON.stringify(kind)} is not a registered kind`, {
        field: 'kind',
      });
    }
    const r = def.bodySchema.safeParse(body);
    if (!r.success) {
      const { field, message } = zodIssue(r.error, 'body');
      throw new PackageError('manifest_invalid', message, { field });
    }
    let files: unknown;
    try {
      files = def.files(r.data);
    } catch (err) {
      throw new PackageError('manifest_invalid', `body.files: kind ${kind} could not list its files`, {
        field: 'body.files',
        cause: err,
      });
    }
    return { body: r.data, files: checkPackageFiles(files) };
  }
}

const FileListSchema = z.array(PackageFileSchema).max(MAX_FILES);

/**
 * Checks a list of package files as a kind returned it and returns a copy (so later changes to the
 * kind's objects cannot alter what was checked): at most {@link MAX_FILES} entries, each matching the
 * file schema (`{path, size, blake3}`, nothing else), every path acceptable (`packagePathProblem`)
 * and no duplicates ignoring case. Throws `PackageError` `manifest_invalid` naming the field
 * (`body.files`, `body.files[i].path`, ...).
 */
export function checkPackageFiles(files: unknown, field = 'body.files'): PackageFile[] {
  const r = FileListSchema.safeParse(files);
  if (!r.success) {
    const issue = zodIssue(r.error, field);
    throw new PackageError('manifest_invalid', issue.message, { field: issue.field });
  }
  const problem = pathListProblem(r.data.map((f) => f.path));
  if (problem !== undefined) {
    const at = `${field}[${problem.index}].path`;
    throw new PackageError('manifest_invalid', `${at}: ${problem.message}`, { field: at });
  }
  return r.data.map((f) => ({ path: f.path, size: f.size, blake3: f.blake3 }));
}
