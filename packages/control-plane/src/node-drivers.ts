import { PlaneError } from './errors.js';
import { mapBounded } from './health.js';
import { HOST_NODE_KIND, type NodeDriver } from './node-driver.js';
import type { PlaceOrderInput } from './order.js';
import type { PlaneContext } from './plane-context.js';
import type { TargetRecord } from './state-store.js';

const KIND_RE = /^[a-z][a-z0-9-]{0,31}$/;

/** The kind of target `t` (its recorded `kind`, else {@link HOST_NODE_KIND}). */
export function nodeKind(t: Pick<TargetRecord, 'kind'>): string {
  return t.kind ?? HOST_NODE_KIND;
}

/**
 * The node drivers of one control plane, by kind: the host driver, and those the plane was given.
 * The plane asks it for the driver of each target ({@link NodeDrivers.of}) and never looks at the
 * kind itself.
 */
export class NodeDrivers {
  readonly #byKind = new Map<string, NodeDriver>();

  /** Registers `drivers`; a kind given twice, or not of the form `[a-z][a-z0-9-]{0,31}`, is refused (`invalid_input`). */
  constructor(drivers: readonly NodeDriver[]) {
    for (const d of drivers) {
      if (!KIND_RE.test(d.kind)) {
        throw new PlaneError(
          'invalid_input',
          `drivers: kind ${JSON.stringify(d.kind)} is not [a-z][a-z0-9-]{0,31}`,
          {
            field: 'drivers',
          },
        );
      }
      if (this.#byKind.has(d.kind)) {
        throw new PlaneError('invalid_input', `drivers: two drivers of kind ${d.kind}`, { field: 'drivers' });
      }
      this.#byKind.set(d.kind, d);
    }
  }

  /** The registered kinds. */
  kinds(): string[] {
    return [...this.#byKind.keys()];
  }

  /** The driver of `kind`; `no_driver` when this controller has none. */
  get(kind: string): NodeDriver {
    const d = this.#byKind.get(kind);
    if (d === undefined) {
      throw new PlaneError(
        'no_driver',
        `this controller has no driver for nodes of kind ${kind} (it drives: ${this.kinds().join(', ')})`,
        { field: 'kind' },
      );
    }
    return d;
  }

  /** The driver of target `t`, or undefined when this controller has none for its kind. */
  find(t: Pick<TargetRecord, 'kind'>): NodeDriver | undefined {
    return this.#byKind.get(nodeKind(t));
  }

  /** The driver of target `t`; `no_driver` when this controller has none for its kind. */
  of(t: Pick<TargetRecord, 'kind'>): NodeDriver {
    return this.get(nodeKind(t));
  }

  /** Tells every driver to forget node `nodeId` (`NodeDriver.forget`: another controller removed it). */
  forget(nodeId: string): void {
    for (const d of this.#byKind.values()) d.forget?.(nodeId);
  }

  /** The driver that places `order` itself (see `NodeDriver.ownsOrder`), or undefined. */
  ownerOf(order: PlaceOrderInput): NodeDriver | undefined {
    for (const d of this.#byKind.values()) if (d.ownsOrder?.(order) === true) return d;
    return undefined;
  }
}

/**
 * Asks node `nodeId` again through its kind's driver (see `NodeDriver.refresh`); `unknown_node` for
 * an unknown id, `no_driver` for a kind this controller has no driver for (the record is left alone).
 */
export async function refreshNode(ctx: PlaneContext, nodeId: string): Promise<TargetRecord> {
  const t = ctx.book.get(nodeId);
  return ctx.drivers.of(t).refresh(ctx, t);
}

/**
 * Refreshes every known node (a health round): in parallel, at most `healthConcurrency` at a time,
 * each bounded on its own; a failure goes to `report` (never thrown). The round's record updates
 * (last seen, facts, unreachable since) share group commits (one durable transaction for the writes
 * made together) instead of one fsync per node: they are observations the next round makes again, and
 * nothing is sent to a node on the strength of them. Resolves once they are durable.
 */
export async function refreshAll(
  ctx: PlaneContext,
  report: (nodeId: string, err: unknown) => void = () => {},
): Promise<void> {
  const store = ctx.store;
  const round = (): Promise<unknown> =>
    mapBounded(store.listTargets(), ctx.config.healthConcurrency, (t) =>
      refreshNode(ctx, t.node_id).catch((err: unknown) => report(t.node_id, err)),
    );
  if (store.grouped === undefined) {
    await round();
    return;
  }
  await store.grouped(async () => {
    try {
      await round();
    } finally {
      await store.durable?.();
    }
  });
}
