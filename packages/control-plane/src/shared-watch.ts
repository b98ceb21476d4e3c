import type { RevocationCheck, RevocationRefs, RevokedSubject } from '@heddle/model';
import type { RevocationList, RevocationListFile } from '@heddle/package';
import type { PlaneContext } from './plane-context.js';
import type { HeldRevocations } from './revocation-push.js';
import type { SharedStateChange } from './state-store.js';

/**
 * Keeps a control plane's in-memory copies of shared state in step with what the other controllers
 * sharing its store write (docs/state.md, "Several controllers: what each one sees of the others'
 * writes"), from the store's `watchShared` changes:
 *
 * - a node's target written or removed by another controller: the node book takes the record in
 *   (facts and tier into the facts cache, the recorded liveness, a removed node forgotten, its
 *   drivers told) and the live engine view computes that node again;
 * - a node's operator record (labels, cordon): the live engine view computes that node again;
 * - the held revocation list replaced: the list this plane checks packages against besides its own
 *   (see {@link SharedStateWatch.revocations}) is read again, and the plane's revocation watchers are
 *   told of a new generation;
 * - `resync`: all of it read again (every target, the view rebuilt from the store, the list).
 *
 * A change that cannot be read now (the database is down) is left to the next `resync`, which the
 * store tells once its notifications are connected again.
 */
export class SharedStateWatch {
  readonly #ctx: PlaneContext;
  readonly #held: HeldRevocations;
  readonly #listeners: ((list: RevocationListFile, generation: number) => void)[] = [];
  /** The store is shared with other controllers (it tells their writes). */
  readonly #shared: boolean;
  #list: RevocationList | undefined;
  #generation = 0;
  /** What the last change that could not be read was, or null. */
  #lastError: string | null = null;

  constructor(ctx: PlaneContext, held: HeldRevocations) {
    this.#ctx = ctx;
    this.#held = held;
    this.#shared = ctx.store.watchShared !== undefined;
    try {
      this.#readList(false);
    } catch (err) {
      this.#lastError = `revocations: ${err instanceof Error ? err.message : String(err)}`;
    }
    ctx.store.watchShared?.((c) => this.take(c));
  }

  /**
   * The revocations of the shared state's held list, checked by this plane besides its own
   * revocations (so a package another controller's list revoked is refused here too). Only with a
   * store other controllers share (one with `watchShared`): alone, the plane's own list is that list.
   */
  readonly revocations: RevocationCheck = {
    firstRevoked: (refs: RevocationRefs): RevokedSubject | undefined =>
      this.#shared ? this.#list?.firstRevoked(refs) : undefined,
  };

  /** Calls `listener` with each newer held revocation list another controller stored. */
  watchRevocations(listener: (list: RevocationListFile, generation: number) => void): void {
    this.#listeners.push(listener);
  }

  /** This plane stored a list itself (a push): taken in without telling the watchers. */
  tookOwnList(): void {
    try {
      this.#readList(false);
    } catch {
      // a list that does not verify here is refused by the push itself
    }
  }

  /** Why the last change could not be taken in (null: it was). */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** Takes in one change (see the class). Never throws. */
  take(c: SharedStateChange): void {
    const { store, book, view, drivers } = this.#ctx;
    try {
      switch (c.kind) {
        case 'target': {
          const t = store.getTarget(c.node_id);
          book.observe(c.node_id, t);
          if (t === undefined) drivers.forget(c.node_id);
          view.touch(c.node_id);
          break;
        }
        case 'meta':
          view.touch(c.node_id);
          break;
        case 'revocations':
          this.#readList(true);
          break;
        case 'resync': {
          for (const id of book.observeAll(store.listTargets())) drivers.forget(id);
          view.reload();
          this.#readList(true);
          break;
        }
      }
      this.#lastError = null;
    } catch (err) {
      this.#lastError = `${c.kind}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  #readList(tell: boolean): void {
    const list = this.#held.current(this.#ctx);
    const generation = list?.generation ?? 0;
    this.#list = list;
    if (generation === this.#generation) return;
    this.#generation = generation;
    if (!tell || list === undefined) return;
    const file = list.toJSON();
    for (const l of this.#listeners) {
      try {
        l(file, generation);
      } catch {
        // a watcher's failure is its own
      }
    }
  }
}
