import {
  canonicalBytes,
  canonicalJson,
  DomainTag,
  errnoCode,
  errorMessage,
  fromHex,
  type KeyPair,
  parseJson,
  readTextBounded,
  signWithDomain,
  toHex,
  verifyWithDomain,
  writeFileAtomic,
} from '@heddle/envelope';
import type { RevocationCheck, RevocationKind, RevocationRefs, RevokedSubject } from '@heddle/model';
import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { hex64, hex128 } from './hex.js';
import {
  type RevocationEntry,
  RevocationEntrySchema,
  type RevocationInput,
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

/** Highest generation a list may have: 2^31 - 1 (so `generation + 1` always stays exact). */
export const MAX_REVOCATION_GENERATION = 2_147_483_647;

/**
 * Most a list's generation may exceed the highest generation held (the mark, 0 on a fresh host):
 * 65,536. Honest lists grow by one per change; a larger jump (`revocation_generation_jump`) would let
 * one list lock every later one out.
 */
export const MAX_GENERATION_STEP = 65_536;

/** How long a list signed by `add` or `renew` stays valid unless told otherwise: 30 days. */
export const DEFAULT_REVOCATION_VALIDITY_MS: number = 30 * 24 * 3600 * 1000;

/** Longest validity a signed list may claim (`expires_at_ms` - now at signing): 366 days. */
export const MAX_REVOCATION_VALIDITY_MS: number = 366 * 24 * 3600 * 1000;

/** The JSON form of a revocation list file. */
export interface RevocationListFile {
  schema: typeof REVOCATION_LIST_SCHEMA;
  /** Incremented by every change; a host refuses to go back to a lower generation. */
  generation: number;
  entries: RevocationEntry[];
  /**
   * When the list stops being valid (Unix ms; required from generation 1, covered by the signature).
   * Past it the list revokes everything (`revocation_list_expired`) until a renewed one is in place.
   */
  expires_at_ms?: number;
  /** The operator key that signed this generation of the list, hex (absent only at generation 0). */
  signer?: string;
  /**
   * Ed25519 over `"heddle.revocation-list.v1\n" || canonical({entries, expires_at_ms, generation,
   * schema})`, hex.
   */
  signature?: string;
}

/** Schema of a revocation list file. */
export const RevocationListFileSchema: z.ZodType<RevocationListFile> = z.strictObject({
  schema: z.literal(REVOCATION_LIST_SCHEMA),
  generation: z.int().nonnegative().max(MAX_REVOCATION_GENERATION),
  entries: z.array(RevocationEntrySchema).max(100_000),
  expires_at_ms: z.int().positive().exactOptional(),
  signer: hex64().exactOptional(),
  signature: hex128().exactOptional(),
});

/** Options of {@link RevocationList.load} and {@link RevocationList.parse}. */
export interface LoadRevocationOptions extends SaveRevocationOptions {
  /** Operator public keys (hex) allowed to sign entries and the list. */
  readonly trustedKeys: readonly string[];
  /**
   * Refuse (code `revocation_rollback`) a list older than this generation, in addition to the
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
  /**
   * {@link RevocationList.load} only: read the generation mark and refuse a list older than it, but
   * never write it (a verifier with read-only access, `heddle pkg verify --revocations`).
   */
  readonly readOnlyMark?: boolean;
  /** The clock (Unix ms; default `Date.now`): a list past its `expires_at_ms` revokes everything. */
  readonly clock?: () => number;
  /**
   * Accept a list past its expiry (to renew or display it); it still revokes everything once in
   * force. Never set it where the list is enforced.
   */
  readonly allowExpired?: boolean;
}

/** Options of {@link RevocationList.add} and {@link RevocationList.renew}. */
export interface SignListOptions {
  /** The time of signing (Unix ms; default `Date.now()`). */
  readonly now?: number;
  /** How long the signed list stays valid (default 30 days, at most 366 days). */
  readonly validForMs?: number;
}

/** What {@link RevocationList.entryFor} answers for a list that failed closed: everything is revoked. */
export interface ListUnavailableEntry {
  readonly kind: 'list-unavailable';
  /** The reference asked about. */
  readonly ref: string;
  /** Why the list failed closed. */
  readonly reason: string;
}

const listMessage = (
  generation: number,
  entries: readonly RevocationEntry[],
  expiresAtMs: number,
): Uint8Array =>
  canonicalBytes({ schema: REVOCATION_LIST_SCHEMA, generation, entries, expires_at_ms: expiresAtMs });

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
  /** Why the list failed closed when it was loaded, or undefined (see also {@link expired}). */
  readonly failure: string | undefined;
  /** When the list stops being valid (Unix ms), or undefined (generation 0). */
  readonly expiresAtMs: number | undefined;
  readonly #file: RevocationListFile;
  readonly #index: Map<string, RevocationEntry>;
  readonly #clock: () => number;

  private constructor(file: RevocationListFile, failure?: string, clock: () => number = Date.now) {
    this.#file = file;
    this.generation = file.generation;
    this.entries = Object.freeze([...file.entries]);
    this.failure = failure;
    this.expiresAtMs = file.expires_at_ms;
    this.#clock = clock;
    this.#index = new Map(file.entries.map((e) => [keyOf(e.kind, e.ref), e]));
  }

  /**
   * The `revocation_list_expired` failure when the list is past its `expires_at_ms` by its clock (then
   * it revokes everything, like a list that failed closed), else undefined.
   */
  get expired(): string | undefined {
    if (this.expiresAtMs === undefined || this.#clock() < this.expiresAtMs) return undefined;
    return `revocation_list_expired: generation ${this.generation} expired at ${new Date(this.expiresAtMs).toISOString()}; renew it (heddle revoke renew) and install the new list`;
  }

  /** The failure in force now: the load failure, or the expiry. */
  #failedNow(): string | undefined {
    return this.failure ?? this.expired;
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
   * trusted key; the generation not below `minGeneration`. Throws `revocation_list_invalid` naming the
   * field, or `revocation_rollback`.
   */
  static parse(text: string, options: LoadRevocationOptions): RevocationList {
    const bad: (message: string, field: string) => never = (message, field) => {
      throw new PackageError('revocation_list_invalid', message, { field });
    };
    let value: unknown;
    try {
      value = parseJson(text, { maxBytes: MAX_REVOCATION_LIST_BYTES });
    } catch (err) {
      return bad(`revocation list: ${errorMessage(err)}`, '$');
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
      if (
        file.entries.length > 0 ||
        file.signer !== undefined ||
        file.signature !== undefined ||
        file.expires_at_ms !== undefined
      ) {
        bad('generation: generation 0 is the empty, unsigned list', 'generation');
      }
    } else {
      if (file.signer === undefined || file.signature === undefined)
        bad('signature: the list is not signed', 'signature');
      if (file.expires_at_ms === undefined) {
        bad(
          'expires_at_ms: a signed list must say when it expires (renew it with heddle revoke renew)',
          'expires_at_ms',
        );
      }
      if (!trusted.has(file.signer)) bad('signer: not a trusted operator key', 'signer');
      const ok = verifyWithDomain(
        DomainTag.revocationList,
        fromHex(file.signer, 32),
        listMessage(file.generation, file.entries, file.expires_at_ms),
        fromHex(file.signature, 64),
      );
      if (!ok) {
        bad('signature: invalid list signature (entries, generation or expiry were altered)', 'signature');
      }
    }
    if (options.minGeneration !== undefined && file.generation < options.minGeneration) {
      throw rollbackError(file.generation, options.minGeneration);
    }
    const list = new RevocationList(file, undefined, options.clock ?? Date.now);
    const expired = list.expired;
    if (expired !== undefined && options.allowExpired !== true) {
      throw new PackageError('revocation_list_expired', expired.replace(/^revocation_list_expired: /, ''), {
        field: 'expires_at_ms',
      });
    }
    return list;
  }

  /**
   * Reads and checks a list file. A missing (unless `allowMissing`), unreadable, oversized or tampered
   * file throws `revocation_list_invalid`: callers must not treat it as empty. A list older than the
   * persisted high-water mark (or `minGeneration`) throws `revocation_rollback`, and so does a missing
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
      if (options.allowMissing === true && errnoCode(err) === 'ENOENT') {
        if (minGeneration > 0) throw rollbackError(0, minGeneration, markFile);
        return RevocationList.empty();
      }
      throw new PackageError(
        'revocation_list_invalid',
        `cannot read revocation list ${path}: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
    const list = RevocationList.parse(text, { ...options, minGeneration: 0 });
    if (list.generation < minGeneration) {
      throw rollbackError(list.generation, minGeneration, mark === minGeneration ? markFile : undefined);
    }
    checkGenerationStep(list.generation, mark);
    if (
      markFile !== undefined &&
      options.trustNamedSigners !== true &&
      options.readOnlyMark !== true &&
      list.generation > mark
    ) {
      writeGenerationMark(markFile, list.generation);
    }
    return list;
  }

  /**
   * Like {@link RevocationList.load}, but a list that cannot be loaded becomes one that revokes
   * everything; its `failure` starts with the code (`revocation_rollback: ...`).
   */
  static loadOrFailClosed(path: string, options: LoadRevocationOptions): RevocationList {
    try {
      return RevocationList.load(path, { ...options, allowExpired: false });
    } catch (err) {
      const code = err instanceof PackageError ? `${err.code}: ` : '';
      return RevocationList.failedClosed(`${code}${errorMessage(err)}`);
    }
  }

  /** True when `kind`/`ref` is revoked (always true for a list that failed closed). */
  isRevoked(kind: RevocationKind, ref: string): boolean {
    return this.#failedNow() !== undefined || this.#index.has(keyOf(kind, ref));
  }

  /**
   * The entry revoking `kind`/`ref`, or undefined when it is not revoked. Agrees with
   * {@link RevocationList.isRevoked}: a list that failed closed has no entries but revokes everything,
   * so it answers a synthetic {@link ListUnavailableEntry} (`kind: "list-unavailable"`, the `ref` asked
   * about, `reason` the failure).
   */
  entryFor(kind: RevocationKind, ref: string): RevocationEntry | ListUnavailableEntry | undefined {
    const failed = this.#failedNow();
    if (failed !== undefined) return { kind: 'list-unavailable', ref, reason: failed };
    return this.#index.get(keyOf(kind, ref));
  }

  /** The first revoked reference: the package id, then each signer key, then each artifact hash. */
  firstRevoked(refs: RevocationRefs): RevokedSubject | undefined {
    const failed = this.#failedNow();
    if (failed !== undefined) return { kind: 'list-unavailable', ref: '*', reason: failed };
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
   * operator key), valid for `options.validForMs` (default 30 days). Already revoked: returns this
   * list unchanged. A failed-closed list cannot be extended (`revocation_list_invalid`).
   */
  add(input: RevocationInput, keys: KeyPair, options: SignListOptions = {}): RevocationList {
    if (this.failure !== undefined) {
      throw new PackageError('revocation_list_invalid', `the revocation list is unusable: ${this.failure}`);
    }
    if (this.#index.has(keyOf(input.kind, input.ref))) return this;
    const entry = signRevocationEntry(input, keys);
    return this.#signed([...this.#file.entries, entry], this.generation + 1, keys, options);
  }

  /**
   * The same entries at the next generation (or at `above + 1` when `above` is higher: to get past a
   * generation mark some host holds), with a fresh expiry, signed by `keys`: how an operator keeps a
   * list from expiring and recovers hosts whose mark is above the list's generation.
   */
  renew(keys: KeyPair, options: SignListOptions & { readonly above?: number } = {}): RevocationList {
    if (this.failure !== undefined) {
      throw new PackageError('revocation_list_invalid', `the revocation list is unusable: ${this.failure}`);
    }
    const above = options.above ?? 0;
    if (!Number.isSafeInteger(above) || above < 0) {
      throw new PackageError('revocation_list_invalid', 'above: expected a generation (an integer >= 0)', {
        field: 'above',
      });
    }
    return this.#signed([...this.#file.entries], Math.max(this.generation, above) + 1, keys, options);
  }

  #signed(
    entries: RevocationEntry[],
    generation: number,
    keys: KeyPair,
    options: SignListOptions,
  ): RevocationList {
    if (generation > MAX_REVOCATION_GENERATION) {
      throw new PackageError(
        'revocation_generation_jump',
        `generation: ${generation} is above the highest allowed (${MAX_REVOCATION_GENERATION})`,
        { field: 'generation' },
      );
    }
    const now = options.now ?? Date.now();
    const validFor = options.validForMs ?? DEFAULT_REVOCATION_VALIDITY_MS;
    if (!Number.isSafeInteger(validFor) || validFor < 1 || validFor > MAX_REVOCATION_VALIDITY_MS) {
      throw new PackageError(
        'revocation_list_invalid',
        `valid_for: expected 1 ms to ${MAX_REVOCATION_VALIDITY_MS} ms (366 days), got ${validFor}`,
        { field: 'valid_for' },
      );
    }
    const expiresAtMs = now + validFor;
    const signature = signWithDomain(
      DomainTag.revocationList,
      keys.secretKey,
      listMessage(generation, entries, expiresAtMs),
    );
    return new RevocationList(
      {
        schema: REVOCATION_LIST_SCHEMA,
        generation,
        entries,
        expires_at_ms: expiresAtMs,
        signer: toHex(keys.publicKey),
        signature: toHex(signature),
      },
      undefined,
      this.#clock,
    );
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
   * (`revocation_rollback`) and not written.
   */
  save(path: string, options: SaveRevocationOptions = {}): void {
    if (this.failure !== undefined)
      throw new PackageError('revocation_list_invalid', 'refusing to save a failed-closed list');
    const markFile = generationFileOf(path, options);
    const mark = markFile === undefined ? 0 : readGenerationMark(markFile);
    if (this.generation < mark) throw rollbackError(this.generation, mark, markFile);
    checkGenerationStep(this.generation, mark);
    writeFileAtomic(path, this.encode(), { mode: 0o644 });
    if (markFile !== undefined && this.generation > mark) writeGenerationMark(markFile, this.generation);
  }
}

/**
 * Refuses (`revocation_generation_jump`) a list whose generation exceeds the highest one held by more
 * than {@link MAX_GENERATION_STEP}.
 */
export function checkGenerationStep(generation: number, held: number): void {
  if (generation - held > MAX_GENERATION_STEP) {
    throw new PackageError(
      'revocation_generation_jump',
      `generation: ${generation} jumps more than ${MAX_GENERATION_STEP} above the generation held (${held}); an honest list grows by one per change`,
      { field: 'generation' },
    );
  }
}
