import { blake3Hex, utf8 } from '@heddle/envelope';
import type { RevocationCheck, RevocationRefs, RevokedSubject } from '@heddle/model';
import { PackageError, RevocationList, readGenerationMark } from '@heddle/package';

/** Options of a {@link RevocationHolder}. */
export interface RevocationHolderOptions {
  /** The list file (`heddle revoke` writes it; the operator copies it to the host). */
  readonly path: string;
  /** Operator public keys (hex) allowed to sign entries and the list. */
  readonly trustedKeys: readonly string[];
  /**
   * Where the generation high-water mark is kept (default `<path>.generation`). Keep it where
   * whoever can write the list cannot (the host's own data directory): deleting the mark is what
   * would let an older, validly signed list be put back.
   */
  readonly generationFile?: string;
}

/**
 * The revocation list a host enforces, reloadable. Loading follows `RevocationList.loadOrFailClosed`
 * with `allowMissing`: a list file that does not exist is an empty list only while no generation above
 * 0 was ever accepted (the persisted `<list>.generation` mark says so); once one was, a deleted,
 * unreadable, tampered or older list revokes everything until a valid one is put back.
 *
 * It is the gate's {@link RevocationCheck} (pass the holder itself, so the gate always sees the
 * current list) and carries a {@link RevocationHolder.version} that grows with every change, which a
 * place reads before and after to catch a revocation that raced it.
 */
export class RevocationHolder implements RevocationCheck {
  readonly #options: RevocationHolderOptions | undefined;
  #list: RevocationList;
  #fingerprint: string;
  #version = 0;
  /** Every entry of every usable list this holder has had in force (never shrinks). */
  readonly #required = new Set<string>();

  /** A holder of the list file in `source`, or of a fixed list (then {@link reload} keeps it). */
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
   * Throws `PackageError` `revocation-rollback` for a list older than the mark (nothing written), and
   * `revocation-list-invalid` for a holder of a fixed list (it keeps no file).
   */
  install(list: RevocationList): boolean {
    const options = this.#options;
    if (options === undefined) {
      throw new PackageError('revocation-list-invalid', 'this holder keeps no revocation file', {
        field: 'path',
      });
    }
    list.save(options.path, {
      ...(options.generationFile === undefined ? {} : { generationFile: options.generationFile }),
    });
    return this.reload();
  }

  /** Why the list failed closed, or undefined when it is usable. */
  get failure(): string | undefined {
    return this.#list.failure;
  }

  /** The first entry (`kind:ref`) an earlier usable list had and `list` lacks, or undefined. */
  droppedEntry(list: RevocationList): string | undefined {
    if (this.#required.size === 0) return undefined;
    const has = new Set(list.entries.map((e) => `${e.kind}:${e.ref}`));
    for (const k of this.#required) if (!has.has(k)) return k;
    return undefined;
  }

  /** Re-reads the file; returns true when the list in force changed. */
  reload(): boolean {
    return this.#options === undefined ? false : this.replace(this.#load());
  }

  /**
   * Puts `list` in force; returns true when it differs from the one in force. A usable list that lacks
   * an entry some earlier usable list had is put in force failed closed instead
   * (`revocation-entries-dropped`): entries are append-only (docs/trust-and-revocation.md).
   */
  replace(candidate: RevocationList): boolean {
    const dropped = candidate.failure === undefined ? this.droppedEntry(candidate) : undefined;
    const list =
      dropped === undefined
        ? candidate
        : RevocationList.failedClosed(
            `revocation-entries-dropped: generation ${candidate.generation} lacks ${dropped}, revoked by an earlier list; entries are never removed`,
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

/** What identifies a list's content: BLAKE3 of its file bytes, or its failure. */
function fingerprint(list: RevocationList): string {
  return list.failure === undefined ? `ok:${blake3Hex(utf8(list.encode()))}` : `failed:${list.failure}`;
}
