import type { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { KIND_RE, type PackageFile } from './format.js';

/**
 * A workload kind: how to validate its body and which files it lists. `cog` is built in; library users
 * register their own kinds with {@link KindRegistry.register}.
 */
export interface KindDefinition<B = unknown> {
  /** The kind name written in the envelope (`[a-z][a-z0-9-]{0,31}`). */
  readonly kind: string;
  /** Schema of the body. Use strict objects: unknown fields must be refused, not dropped. */
  readonly bodySchema: z.ZodType<B>;
  /** The files of a valid body (each `{path, size, blake3}`); the verifier hashes exactly these. */
  files(body: B): readonly PackageFile[];
  /** Human summary lines for `heddle pkg inspect` (optional). */
  describe?(body: B): readonly string[];
}

/** A registry of workload kinds, consulted when an envelope is read. */
export class KindRegistry {
  readonly #kinds = new Map<string, KindDefinition<unknown>>();

  /**
   * Adds a kind. Throws `PackageError` `unknown-kind` when the name is malformed or already taken
   * (a kind is never silently replaced).
   */
  register<B>(definition: KindDefinition<B>): this {
    if (!KIND_RE.test(definition.kind)) {
      throw new PackageError('unknown-kind', `kind name ${JSON.stringify(definition.kind)} is malformed`, {
        field: 'kind',
      });
    }
    if (this.#kinds.has(definition.kind)) {
      throw new PackageError('unknown-kind', `kind ${definition.kind} is already registered`, {
        field: 'kind',
      });
    }
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
   * Validates `body` as `kind` and returns the typed body and its files. Throws `PackageError`
   * `manifest-invalid` naming the field (`kind`, or `body.<path>`).
   */
  parseBody(kind: string, body: unknown): { body: unknown; files: readonly PackageFile[] } {
    const def = this.#kinds.get(kind);
    if (!def) {
      throw new PackageError('manifest-invalid', `kind: ${JSON.stringify(kind)} is not a registered kind`, {
        field: 'kind',
      });
    }
    const r = def.bodySchema.safeParse(body);
    if (!r.success) {
      const { field, message } = zodIssue(r.error, 'body');
      throw new PackageError('manifest-invalid', message, { field });
    }
    return { body: r.data, files: def.files(r.data) };
  }
}
