import { blake3Hex, utf8 } from '@heddle/envelope';
import type { RevocationCheck, RevocationRefs, RevokedSubject } from '@heddle/model';
import { PackageError } from './errors.js';
import { readGenerationMark, rollbackError } from './revocation-generation.js';
import { checkGenerationStep, RevocationList } from './revocation-list.js';

/** Options of a {@link RevocationHolder}. */
export interface RevocationHolderOptions {
  /** The list file (`heddle revoke` writes it; the operator copies it to the host or the controller). */
  readonly path: string;
  /** Operator public keys (hex) allowed to sign entries and the list. */
  readonly trustedKeys: readonly string[];
  /**
   * Where the generation high-water mark is kept (default `<path>.generation`). Keep it where
   * whoever can write the list cannot (the daemon's own data directory): deleting the mark is what
   * would let an older, validly signed list be put back.
   */
  readonly generationFile?: string;
  /** The clock lists are checked against for expiry (Unix ms; default `Date.now`). */
  readonly clock?: () => number;
}

/**
 * The revocation list a daemon enforces (the host and the controller alike), reloadable. Loading
 * follows `RevocationList.loadOrFailClosed` with `allowMissing`: a list file that does not exist is an
 * empty list only while no generation above 0 was ever accepted (the persisted generation mark says
 * so); once one was, a deleted, unreadable, tampered, expired, older or too far ahead
 * (`revocation_generation_jump`) list revokes everything until a valid one is put back. A list that
 * lacks an entry an earlier usable list had fails closed too (`revocation_entries_dropped`).
 *
 * It is the gate's {@link RevocationCheck} (pass the holder itself, so the gate always sees the
 * current list) and carries a {@link RevocationHolder.version} that grows with every change (new
 * content, a new failure, or the list in force passing its expiry), which a place reads before and
 * after to catch a revocation that raced it. It does not poll by itself: the daemon calls
 * {@link RevocationHolder.reload} on its own schedule.
 */
export class RevocationHolder implements RevocationCheck {
  readonly #options: RevocationHolderOptions | undefined;
  #list: RevocationList;
  #fingerprint: string;
  #version = 0;
  /** Every entry of every usable list this holder has had in force (never shrinks). */
  readonly #required = new Set<string>();

  /** A holder of the list file in `source`, or of a fixed list (then {@link RevocationHolder.reload} keeps it). */
  constructor(source: RevocationHolderOptions | RevocationList) {
    this.#options = source instanceof RevocationList ? undefined : source;
    this.#list = source instanceof RevocationList ? source : this.#load();
    if (this.#list.failure === undefined) {
      for (const e of this.#list.entries) this.#required.add(`${e.kind}:${e.ref}`);
    }
    this.#fingerprint = fingerprint(this.#list);
  }

  #load(): RevocationList {
    const options = this.#options;
    if (options === undefined) return this.#list;
    return RevocationList.loadOrFailClosed(options.path, {
      trustedKeys: options.trustedKeys,
      allowMissing: true,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.generationFile === undefined ? {} : { generationFile: options.generationFile }),
    });
  }

  /** The list in force. */
  get list(): RevocationList {
    return this.#list;
  }

  /** Grows by one with every change of the list in force. */
  get version(): number {
    return this.#version;
  }

  /** The list file, or undefined for a holder of a fixed list. */
  get path(): string | undefined {
    return this.#options?.path;
  }

  /**
   * The highest generation this holder has accepted: the list in force's, or the persisted mark's when
   * that is higher (a list that failed closed is at generation 0, its mark is not).
   */
  get highestGeneration(): number {
    const options = this.#options;
    let mark = 0;
    if (options !== undefined) {
      try {
        mark = readGenerationMark(options.generationFile ?? `${options.path}.generation`);
      } catch {
        mark = 0;
      }
    }
    return Math.max(mark, this.#list.failure === undefined ? this.#list.generation : 0);
  }

  /** True when `list` has the content of the list in force (same bytes). */
  holds(list: RevocationList): boolean {
    return fingerprint(list) === this.#fingerprint;
  }

  /**
   * Writes `list` (already checked by the caller) to the holder's file crash-safely with its generation
   * mark (`RevocationList.save`, once), then re-reads it; returns true when the list in force changed.
   * Throws `PackageError` `revocation_rollback` for a list older than the mark (nothing written), and
   * `revocation_list_invalid` for a holder of a fixed list (it keeps no file).
   */
  install(list: RevocationList): boolean {
    const options = this.#options;
    if (options === undefined) {
      throw new PackageError('revocation_list_invalid', 'this holder keeps no revocation file', {
        field: 'path',
      });
    }
    list.save(options.path, {
      ...(options.generationFile === undefined ? {} : { generationFile: options.generationFile }),
    });
    return this.reload();
  }

  /**
   * Why the list in force revokes everything (its load failure, or its expiry passed by the holder's
   * clock), or undefined when it is usable.
   */
  get failure(): string | undefined {
    return this.#list.failure ?? this.#list.expired;
  }

  /**
   * Puts a list handed over the wire or the API in force, the checked way: refuses (`PackageError`,
   * nothing written) a list older than the highest generation held (`revocation_rollback`), one more
   * than `MAX_GENERATION_STEP` above it (`revocation_generation_jump`), one that lacks an entry an
   * earlier usable list had (`revocation_entries_dropped`, field `entries`), and another list at the
   * generation held (`revocation_generation_reused`); the list held already is not written again.
   * Otherwise {@link RevocationHolder.install}s it. Returns whether it was written (`applied`) and
   * whether the list in force changed. `list` must already be verified against the operator keys.
   */
  accept(list: RevocationList): { readonly applied: boolean; readonly changed: boolean } {
    const held = this.highestGeneration;
    if (list.generation < held) throw rollbackError(list.generation, held);
    checkGenerationStep(list.generation, held);
    const dropped = this.droppedEntry(list);
    if (dropped !== undefined) {
      throw new PackageError(
        'revocation_entries_dropped',
        `entries: the list lacks ${dropped}, revoked by a list held before; entries are never removed`,
        { field: 'entries' },
      );
    }
    if (list.generation === held && this.failure === undefined) {
      if (!this.holds(list)) {
        throw new PackageError(
          'revocation_generation_reused',
          `generation: another list is held at generation ${held} (a changed list needs a new generation)`,
          { field: 'generation' },
        );
      }
      return { applied: false, changed: false };
    }
    return { applied: true, changed: this.install(list) };
  }

  /** The first entry (`kind:ref`) an earlier usable list had and `list` lacks, or undefined. */
  droppedEntry(list: RevocationList): string | undefined {
    if (this.#required.size === 0) return undefined;
    const has = new Set(list.entries.map((e) => `${e.kind}:${e.ref}`));
    for (const k of this.#required) if (!has.has(k)) return k;
    return undefined;
  }

  /**
   * Re-reads the file (a holder of a fixed list checks its expiry only); returns true when the list in
   * force changed, including when it has just expired.
   */
  reload(): boolean {
    return this.replace(this.#options === undefined ? this.#list : this.#load());
  }

  /**
   * Puts `list` in force; returns true when it differs from the one in force. A usable list that lacks
   * an entry some earlier usable list had is put in force failed closed instead
   * (`revocation_entries_dropped`): entries are append-only (docs/trust-and-revocation.md).
   */
  replace(candidate: RevocationList): boolean {
    const dropped = candidate.failure === undefined ? this.droppedEntry(candidate) : undefined;
    const list =
      dropped === undefined
        ? candidate
        : RevocationList.failedClosed(
            `revocation_entries_dropped: generation ${candidate.generation} lacks ${dropped}, revoked by an earlier list; entries are never removed`,
          );
    if (list.failure === undefined) for (const e of list.entries) this.#required.add(`${e.kind}:${e.ref}`);
    const next = fingerprint(list);
    if (next === this.#fingerprint) return false;
    this.#list = list;
    this.#fingerprint = next;
    this.#version++;
    return true;
  }

  /** The first revoked reference among `refs` in the list in force (everything, when it failed closed). */
  firstRevoked(refs: RevocationRefs): RevokedSubject | undefined {
    return this.#list.firstRevoked(refs);
  }
}

/** What identifies a list's content: BLAKE3 of its file bytes (and whether it expired), or its failure. */
function fingerprint(list: RevocationList): string {
  if (list.failure !== undefined) return `failed:${list.failure}`;
  return `ok:${blake3Hex(utf8(list.encode()))}${list.expired === undefined ? '' : ':expired'}`;
}
