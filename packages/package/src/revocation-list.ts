import {
  canonicalBytes,
  canonicalJson,
  DomainTag,
  fromHex,
  type KeyPair,
  parseJson,
  readTextBounded,
  signWithDomain,
  toHex,
  verifyWithDomain,
  writeFileAtomic,
} from '@heddle/envelope';
import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { hex64, hex128 } from './hex.js';
import {
  type RevocationCheck,
  type RevocationEntry,
  RevocationEntrySchema,
  type RevocationInput,
  type RevocationKind,
  type RevocationRefs,
  type RevokedSubject,
  signRevocationEntry,
  verifyRevocationEntry,
} from './revocation.js';
import {
  generationFileOf,
  readGenerationMark,
  rollbackError,
  type SaveRevocationOptions,
  writeGenerationMark,
} from './revocation-generation.js';

/** The `schema` of a revocation list file (and of the message its signature covers). */
export const REVOCATION_LIST_SCHEMA = 'heddle.revocation-list.v1';

/** Largest accepted revocation list file: 16 MiB. */
export const MAX_REVOCATION_LIST_BYTES: number = 16 * 1024 * 1024;

/** The JSON form of a revocation list file. */
export interface RevocationListFile {
  schema: typeof REVOCATION_LIST_SCHEMA;
  /** Incremented by every change; a host refuses to go back to a lower generation. */
  generation: number;
  entries: RevocationEntry[];
  /** The operator key that signed this generation of the list, hex (absent only at generation 0). */
  signer?: string;
  /** Ed25519 over `"heddle.revocation-list.v1\n" || canonical({schema, generation, entries})`, hex. */
  signature?: string;
}

/** Schema of a revocation list file. */
export const RevocationListFileSchema: z.ZodType<RevocationListFile> = z.strictObject({
  schema: z.literal(REVOCATION_LIST_SCHEMA),
  generation: z.int().nonnegative(),
  entries: z.array(RevocationEntrySchema).max(100_000),
  signer: hex64().optional(),
  signature: hex128().optional(),
});

/** Options of {@link RevocationList.load} and {@link RevocationList.parse}. */
export interface LoadRevocationOptions extends SaveRevocationOptions {
  /** Operator public keys (hex) allowed to sign entries and the list. */
  readonly trustedKeys: readonly string[];
  /**
   * Refuse (code `revocation-rollback`) a list older than this generation, in addition to the
   * persisted high-water mark (`generationFile`, used by {@link RevocationList.load}).
   */
  readonly minGeneration?: number;
  /**
   * Accept any signer the list names, still checking every signature against it. For displaying a
   * list without a trust file only; never set it where the list is enforced.
   */
  readonly trustNamedSigners?: boolean;
  /**
   * {@link RevocationList.load} only: a file that does not exist (ENOENT) is an empty list. For the
   * operator who creates a list; a host must leave it unset so a deleted list fails closed.
   */
  readonly allowMissing?: boolean;
}

/** What {@link RevocationList.entryFor} answers for a list that failed closed: everything is revoked. */
export interface ListUnavailableEntry {
  readonly kind: 'list-unavailable';
  /** The reference asked about. */
  readonly ref: string;
  /** Why the list failed closed. */
  readonly reason: string;
}

const listMessage = (generation: number, entries: readonly RevocationEntry[]): Uint8Array =>
  canonicalBytes({ schema: REVOCATION_LIST_SCHEMA, generation, entries });

const keyOf = (kind: string, ref: string): string => `${kind}:${ref}`;

/**
 * A signed revocation list: revoked package ids, signer keys and artifact hashes, each entry signed by
 * an operator key, the whole list signed again with its generation so that a removed entry or a
 * replayed older list is detected. Immutable: {@link RevocationList.add} returns the next generation.
 * A list that failed to load ({@link RevocationList.loadOrFailClosed}) revokes everything.
 */
export class RevocationList implements RevocationCheck {
  /** The generation (0 for a new, empty list). */
  readonly generation: number;
  /** The entries, oldest first. */
  readonly entries: readonly RevocationEntry[];
  /** Why the list failed closed, or undefined for a usable list. */
  readonly failure: string | undefined;
  readonly #file: RevocationListFile;
  readonly #index: Map<string, RevocationEntry>;

  private constructor(file: RevocationListFile, failure?: string) {
    this.#file = file;
    this.generation = file.generation;
    this.entries = Object.freeze([...file.entries]);
    this.failure = failure;
    this.#index = new Map(file.entries.map((e) => [keyOf(e.kind, e.ref), e]));
  }

  /** A new, empty list at generation 0. */
  static empty(): RevocationList {
    return new RevocationList({ schema: REVOCATION_LIST_SCHEMA, generation: 0, entries: [] });
  }

  /** A list that revokes everything, carrying the reason (what a host uses when its list is unreadable). */
  static failedClosed(reason: string): RevocationList {
    return new RevocationList({ schema: REVOCATION_LIST_SCHEMA, generation: 0, entries: [] }, reason);
  }

  /**
   * Parses and checks list text: strict JSON and schema; every entry signed by a trusted key with a
   * valid signature; no duplicate entry; the list signature (required from generation 1) valid and by a
   * trusted key; the generation not below `minGeneration`. Throws `revocation-list-invalid` naming the
   * field, or `revocation-rollback`.
   */
  static parse(text: string, options: LoadRevocationOptions): RevocationList {
    const bad = (message: string, field: string): never => {
      throw new PackageError('revocation-list-invalid', message, { field });
    };
    let value: unknown;
    try {
      value = parseJson(text, { maxBytes: MAX_REVOCATION_LIST_BYTES });
    } catch (err) {
      return bad(`revocation list: ${(err as Error).message}`, '$');
    }
    const r = RevocationListFileSchema.safeParse(value);
    if (!r.success) {
      const { field, message } = zodIssue(r.error);
      return bad(message, field);
    }
    const file = r.data;
    const trusted = new Set(options.trustedKeys);
    if (options.trustNamedSigners === true) {
      for (const e of file.entries) trusted.add(e.signer);
      if (file.signer !== undefined) trusted.add(file.signer);
    }
    const seen = new Set<string>();
    file.entries.forEach((e, i) => {
      if (!trusted.has(e.signer))
        bad(`entries[${i}].signer: not a trusted operator key`, `entries[${i}].signer`);
      if (!verifyRevocationEntry(e))
        bad(`entries[${i}].signature: invalid signature`, `entries[${i}].signature`);
      const k = keyOf(e.kind, e.ref);
      if (seen.has(k)) bad(`entries[${i}]: duplicate revocation of ${k}`, `entries[${i}]`);
      seen.add(k);
    });
    if (file.generation === 0) {
      if (file.entries.length > 0 || file.signer !== undefined || file.signature !== undefined) {
        bad('generation: generation 0 is the empty, unsigned list', 'generation');
      }
    } else {
      if (file.signer === undefined || file.signature === undefined)
        bad('signature: the list is not signed', 'signature');
      if (!trusted.has(file.signer as string)) bad('signer: not a trusted operator key', 'signer');
      const ok = verifyWithDomain(
        DomainTag.revocationList,
        fromHex(file.signer as string, 32),
        listMessage(file.generation, file.entries),
        fromHex(file.signature as string, 64),
      );
      if (!ok) bad('signature: invalid list signature (entries or generation were altered)', 'signature');
    }
    if (options.minGeneration !== undefined && file.generation < options.minGeneration) {
      throw rollbackError(file.generation, options.minGeneration);
    }
    return new RevocationList(file);
  }

  /**
   * Reads and checks a list file. A missing (unless `allowMissing`), unreadable, oversized or tampered
   * file throws `revocation-list-invalid`: callers must not treat it as empty. A list older than the
   * persisted high-water mark (or `minGeneration`) throws `revocation-rollback`, and so does a missing
   * file once a generation above 0 was seen, even with `allowMissing`. A list accepted with trusted
   * keys raises the mark to its generation (see {@link SaveRevocationOptions.generationFile}).
   */
  static load(path: string, options: LoadRevocationOptions): RevocationList {
    const markFile = generationFileOf(path, options);
    const mark = markFile === undefined ? 0 : readGenerationMark(markFile);
    const minGeneration = Math.max(options.minGeneration ?? 0, mark);
    let text: string;
    try {
      text = readTextBounded(path, MAX_REVOCATION_LIST_BYTES);
    } catch (err) {
      if (options.allowMissing === true && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        if (minGeneration > 0) throw rollbackError(0, minGeneration, markFile);
        return RevocationList.empty();
      }
      throw new PackageError(
        'revocation-list-invalid',
        `cannot read revocation list ${path}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const list = RevocationList.parse(text, { ...options, minGeneration: 0 });
    if (list.generation < minGeneration) {
      throw rollbackError(list.generation, minGeneration, mark === minGeneration ? markFile : undefined);
    }
    if (markFile !== undefined && options.trustNamedSigners !== true && list.generation > mark) {
      writeGenerationMark(markFile, list.generation);
    }
    return list;
  }

  /**
   * Like {@link RevocationList.load}, but a list that cannot be loaded becomes one that revokes
   * everything; its `failure` starts with the code (`revocation-rollback: ...`).
   */
  static loadOrFailClosed(path: string, options: LoadRevocationOptions): RevocationList {
    try {
      return RevocationList.load(path, options);
    } catch (err) {
      const code = err instanceof PackageError ? `${err.code}: ` : '';
      return RevocationList.failedClosed(`${code}${(err as Error).message}`);
    }
  }

  /** True when `kind`/`ref` is revoked (always true for a list that failed closed). */
  isRevoked(kind: RevocationKind, ref: string): boolean {
    return this.failure !== undefined || this.#index.has(keyOf(kind, ref));
  }

  /**
   * The entry revoking `kind`/`ref`, or undefined when it is not revoked. Agrees with
   * {@link RevocationList.isRevoked}: a list that failed closed has no entries but revokes everything,
   * so it answers a synthetic {@link ListUnavailableEntry} (`kind: "list-unavailable"`, the `ref` asked
   * about, `reason` the failure).
   */
  entryFor(kind: RevocationKind, ref: string): RevocationEntry | ListUnavailableEntry | undefined {
    if (this.failure !== undefined) return { kind: 'list-unavailable', ref, reason: this.failure };
    return this.#index.get(keyOf(kind, ref));
  }

  /** The first revoked reference: the package id, then each signer key, then each artifact hash. */
  firstRevoked(refs: RevocationRefs): RevokedSubject | undefined {
    if (this.failure !== undefined) return { kind: 'list-unavailable', ref: '*', reason: this.failure };
    const hit = (kind: RevocationKind, ref: string): RevokedSubject | undefined => {
      const e = this.#index.get(keyOf(kind, ref));
      return e === undefined
        ? undefined
        : { kind, ref, ...(e.reason === undefined ? {} : { reason: e.reason }) };
    };
    if (refs.packageId !== undefined) {
      const s = hit('package', refs.packageId);
      if (s) return s;
    }
    for (const k of refs.signerKeys) {
      const s = hit('signer', k);
      if (s) return s;
    }
    for (const a of refs.artifactHashes) {
      const s = hit('artifact', a);
      if (s) return s;
    }
    return undefined;
  }

  /**
   * Returns the next generation with `input` revoked, the entry and the list signed by `keys` (an
   * operator key). Already revoked: returns this list unchanged. A failed-closed list cannot be
   * extended (`revocation-list-invalid`).
   */
  add(input: RevocationInput, keys: KeyPair): RevocationList {
    if (this.failure !== undefined) {
      throw new PackageError('revocation-list-invalid', `the revocation list is unusable: ${this.failure}`);
    }
    if (this.#index.has(keyOf(input.kind, input.ref))) return this;
    const entry = signRevocationEntry(input, keys);
    const entries = [...this.#file.entries, entry];
    const generation = this.generation + 1;
    const signature = signWithDomain(
      DomainTag.revocationList,
      keys.secretKey,
      listMessage(generation, entries),
    );
    return new RevocationList({
      schema: REVOCATION_LIST_SCHEMA,
      generation,
      entries,
      signer: toHex(keys.publicKey),
      signature: toHex(signature),
    });
  }

  /** The file form. */
  toJSON(): RevocationListFile {
    return this.#file;
  }

  /** The file bytes: canonical JSON and a line feed. */
  encode(): string {
    return `${canonicalJson(this.#file, { maxDepth: 8, maxBytes: MAX_REVOCATION_LIST_BYTES })}\n`;
  }

  /**
   * Writes the list crash-safely (temporary file, fsync, rename, directory fsync): old or new, never
   * torn; then raises the high-water mark to this generation (written after the list, so a crash in
   * between leaves the mark behind, never ahead). A list older than the mark is refused
   * (`revocation-rollback`) and not written.
   */
  save(path: string, options: SaveRevocationOptions = {}): void {
    if (this.failure !== undefined)
      throw new PackageError('revocation-list-invalid', 'refusing to save a failed-closed list');
    const markFile = generationFileOf(path, options);
    const mark = markFile === undefined ? 0 : readGenerationMark(markFile);
    if (this.generation < mark) throw rollbackError(this.generation, mark, markFile);
    writeFileAtomic(path, this.encode(), { mode: 0o644 });
    if (markFile !== undefined && this.generation > mark) writeGenerationMark(markFile, this.generation);
  }
}
