import type { Chain } from '@heddle/chain';
import { CliError, ExitCode, errorMessage, type Logger } from '@heddle/cli-kit';
import type { StateStore } from '@heddle/control-plane';
import { z } from 'zod';

/** The chain source of the controller's state marks. */
export const STATE_MARK_SOURCE = 'controller';
/** The kind of a state mark: `{state_seq}`, the state's write counter when it was chained. */
export const STATE_MARK_KIND = 'controller.state';
/** The kind chained when an operator accepted a loss at start-up (`--accept-state-loss`, `--accept-chain-loss`). */
export const STATE_LOSS_KIND = 'controller.state_loss_accepted';

/** Marks are chained at most this often (and at shutdown), so the chain is not flooded. */
const MARK_INTERVAL_MS = 1000;

const SEQ_KEY = 'state_seq';
const SEEN_KEY = 'chain_seen';

/**
 * The meta key of the chain position the state was sealed against by `controller` (its node id): each
 * controller sharing one state (several controllers on PostgreSQL) seals it against its own chain.
 * Without a controller: the one key of a state written before the key was per controller.
 */
function seenKey(controller: string | undefined): string {
  return controller === undefined ? SEEN_KEY : `${SEEN_KEY}.${controller}`;
}

/** The part of a state store the seal needs: its application meta values (`SqliteStateStore` has them). */
export interface SealMeta {
  getMeta(key: string): string | undefined;
  putMeta(key: string, value: string): void;
}

/** What the state says about the chain it was last sealed against. */
interface ChainSeen {
  readonly size: number;
  readonly head: string;
}

/** What the start-up check found. */
export interface SealReport {
  /** The state's write counter. */
  readonly stateSeq: number;
  /** The write counter of the last state mark in the chain, if any. */
  readonly chainStateSeq: number | undefined;
  /** A loss the operator accepted at this start, if any. */
  readonly accepted: 'state' | 'chain' | undefined;
}

/** Options of {@link checkStateAgainstChain}. */
export interface SealCheckOptions {
  /** Run on although the state is behind the chain (chains a `controller.state_loss_accepted`). */
  readonly acceptStateLoss?: boolean;
  /** Run on although the chain is behind what the state was sealed against (chains the same). */
  readonly acceptChainLoss?: boolean;
  /**
   * The node id of the controller whose chain this is: the state keeps the position it was sealed
   * against per controller (see {@link StateSeal}). A state that has none for it yet is checked
   * against the position of a state written before that (one controller's), which is then moved to
   * this controller's key.
   */
  readonly controller?: string;
}

const SeenSchema = z.object({ size: z.int().nonnegative(), head: z.string() });

function readSeen(meta: SealMeta, key: string): ChainSeen | undefined {
  const text = meta.getMeta(key);
  if (text === undefined) return undefined;
  const v = SeenSchema.safeParse(JSON.parse(text));
  return v.success ? { size: v.data.size, head: v.data.head } : undefined;
}

function lastMark(chain: Chain): number | undefined {
  const marks = chain.byKindOf(STATE_MARK_KIND);
  for (let i = marks.length - 1; i >= 0; i--) {
    const payload = marks[i]?.payload;
    const seq =
      typeof payload === 'object' && payload !== null ? Reflect.get(payload, 'state_seq') : undefined;
    if (typeof seq === 'number' && Number.isSafeInteger(seq)) return seq;
  }
  return undefined;
}

/**
 * Checks, at start-up, the state database against the audit chain (docs/operator-guide.md, "State and
 * chain out of step"). Every write of the state bumps its write counter (`state_seq`, in the same
 * transaction), and the controller chains that counter (`controller.state`) at most once a second and
 * at shutdown, then records in the state the chain size and head it reached. Refuses to start
 * (`CliError`, exit 3):
 *
 * - `state_behind_chain`: the state's counter is below the last one chained: writes the chain saw were
 *   lost from the state (a lost `state.db-wal`, an old copy of `state.db` put back);
 * - `chain_behind_state`: the chain is shorter than, or differs at, the point the state was last sealed
 *   against (a deleted, truncated or replaced `chain.jsonl`).
 *
 * The operator either restores the missing file, or accepts the loss with `--accept-state-loss` /
 * `--accept-chain-loss`: the acceptance is chained (`controller.state_loss_accepted`) and the counter
 * moves past the chain's, so the next start is clean.
 */
export async function checkStateAgainstChain(
  meta: SealMeta,
  chain: Chain,
  options: SealCheckOptions = {},
): Promise<SealReport> {
  const stateSeq = Number(meta.getMeta(SEQ_KEY) ?? '0');
  const own = seenKey(options.controller);
  const legacy = own !== SEEN_KEY && meta.getMeta(own) === undefined ? readSeen(meta, SEEN_KEY) : undefined;
  const seen = legacy ?? readSeen(meta, own);
  const chainStateSeq = lastMark(chain);
  let accepted: SealReport['accepted'];
  if (seen !== undefined) {
    const at = seen.size === 0 ? undefined : chain.get(seen.size - 1);
    if (chain.size < seen.size || (seen.size > 0 && at?.hash !== seen.head)) {
      const what =
        chain.size < seen.size
          ? `the chain holds ${chain.size} events, but the state was sealed against ${seen.size}`
          : `event ${seen.size - 1} of the chain is not the one the state was sealed against`;
      if (options.acceptChainLoss !== true) {
        throw new CliError(
          'chain_behind_state',
          `chain_file: ${what}: the chain file was deleted, truncated or replaced. Restore it from a backup, or start once with --accept-chain-loss to continue on this chain (the loss is chained)`,
          ExitCode.badInput,
          { field: 'chain_file', details: { chain_size: chain.size, sealed_size: seen.size } },
        );
      }
      accepted = 'chain';
    }
  }
  if (accepted === undefined && chainStateSeq !== undefined && stateSeq < chainStateSeq) {
    if (options.acceptStateLoss !== true) {
      throw new CliError(
        'state_behind_chain',
        `state_db: the state is at write ${stateSeq}, but the chain recorded write ${chainStateSeq}: writes were lost from the state (a lost state.db-wal, or an old state.db). Restore state.db with its -wal file, or start once with --accept-state-loss to run on what is left (the loss is chained; re-add lost nodes)`,
        ExitCode.badInput,
        { field: 'state_db', details: { state_seq: stateSeq, chain_state_seq: chainStateSeq } },
      );
    }
    accepted = 'state';
  }
  if (legacy !== undefined) {
    // The position a state written before the per-controller keys was sealed against is this
    // controller's (it checked out against its chain): kept under its key, and the old key cleared
    // (another controller starting on the state has a chain of its own).
    meta.putMeta(own, JSON.stringify(legacy));
    meta.putMeta(SEEN_KEY, 'null');
  }
  if (accepted !== undefined) {
    await chain.append(STATE_MARK_SOURCE, STATE_LOSS_KIND, {
      lost: accepted,
      state_seq: stateSeq,
      chain_state_seq: chainStateSeq ?? null,
      chain_size: chain.size,
      sealed_size: seen?.size ?? null,
    });
    // Past the chain's counter, so the marks that follow are ahead of every earlier one.
    meta.putMeta(SEQ_KEY, String(Math.max(stateSeq, chainStateSeq ?? 0) + 1));
  }
  return { stateSeq, chainStateSeq, accepted };
}

/**
 * Keeps the state and the chain sealed while the controller runs: {@link StateSeal.wrap} returns the
 * store with every `put*` / `remove*` bumping the write counter in the same transaction, and marks are
 * chained at most once a second after a write, and by {@link StateSeal.flush}.
 */
export class StateSeal {
  readonly #meta: SealMeta;
  readonly #chain: Chain;
  readonly #log: Logger;
  readonly #seenKey: string;
  #marked: number;
  #timer: NodeJS.Timeout | undefined;
  #marking: Promise<void> = Promise.resolve();

  /**
   * `controller`: the node id of the controller whose chain `chain` is (the chain position is kept
   * under its own key, see {@link SealCheckOptions.controller}); without it, the one key of a state
   * written before the keys were per controller.
   */
  constructor(meta: SealMeta, chain: Chain, log: Logger, controller?: string) {
    this.#meta = meta;
    this.#chain = chain;
    this.#log = log;
    this.#seenKey = seenKey(controller);
    this.#marked = -1;
  }

  /** The store, each write of which bumps the state's write counter in the same transaction. */
  wrap<S extends StateStore>(store: S): S {
    return new Proxy(store, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        const name = String(prop);
        if (!/^(put|remove)[A-Z]/.test(name)) return value.bind(target);
        return (...args: unknown[]) =>
          target.transaction(() => {
            const r: unknown = Reflect.apply(value, target, args);
            // Read and bumped inside the transaction: a rollback takes the bump back with the write.
            this.#meta.putMeta(SEQ_KEY, String(this.#committedSeq() + 1));
            this.#schedule();
            return r;
          });
      },
    });
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.mark();
    }, MARK_INTERVAL_MS);
    this.#timer.unref();
  }

  /** The write counter as the database holds it (outside a transaction: the committed one). */
  #committedSeq(): number {
    return Number(this.#meta.getMeta(SEQ_KEY) ?? '0');
  }

  /**
   * Chains the committed write counter (if it was not chained yet) and records the chain position
   * reached. Runs between transactions (better-sqlite3 transactions never span an await), so the
   * counter read is one the database has committed: a mark never claims a write that was rolled back.
   */
  mark(): Promise<void> {
    this.#marking = this.#marking.then(async () => {
      // Everything inside the try: a store that cannot be read now (a PostgreSQL server that is down)
      // must not leave #marking rejected, or every later mark and the shutdown's flush would fail.
      try {
        const seq = this.#committedSeq();
        if (seq === this.#marked) return;
        const e = await this.#chain.append(STATE_MARK_SOURCE, STATE_MARK_KIND, { state_seq: seq });
        this.#meta.putMeta(this.#seenKey, JSON.stringify({ size: e.seq + 1, head: e.hash }));
        this.#marked = seq;
      } catch (err) {
        this.#log.warn('could not chain the state mark', { error: errorMessage(err) });
      }
    });
    return this.#marking;
  }

  /** Stops the timer and chains a last mark (before the chain and the store close). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.mark();
  }
}
