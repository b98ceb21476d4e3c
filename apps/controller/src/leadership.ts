import type { Chain } from '@heddle/chain';
import type { Logger } from '@heddle/cli-kit';
import {
  LeaderElector,
  type LeaderStatus,
  type LeaseConnection,
  PgLeaderLease,
} from '@heddle/control-plane/leader';

/** The chain source and kind of a controller's takeover record (docs/chain.md). */
export const LEADER_SOURCE = 'controller';
export const LEADER_KIND = 'controller.leader';

/** A running leadership (several controllers over one database). */
export interface Leadership {
  readonly elector: LeaderElector;
  /** Who leads, for `GET /v1/health`. */
  status(): LeaderStatus;
  /** Gives the lease up (when held) and closes the database pool. */
  stop(): Promise<void>;
}

/**
 * Joins the leadership of the controllers sharing the database `connection` names
 * (docs/operator-guide.md, "Running several controllers"). Each term this controller wins is chained
 * first (`controller.leader`: its epoch, and the previous holder with its epoch and the hash of its own
 * `controller.leader` event: a cross-reference `heddle chain verify` checks), and its hash is written to
 * the lease row for the next leader. `onLeading` runs when this controller starts leading (the daemon
 * ticks at once). Each change is logged (`leadership`).
 */
export function startLeadership(o: {
  readonly connection: string | LeaseConnection;
  readonly refreshMs: number;
  readonly nodeId: string;
  readonly chain: Chain;
  readonly log: Logger;
  readonly onLeading: () => void;
}): Leadership {
  const lease = new PgLeaderLease(o.connection, { statementTimeoutMs: Math.max(500, o.refreshMs / 3) });
  const elector = new LeaderElector({
    lease,
    self: o.nodeId,
    refreshMs: o.refreshMs,
    onElected: async (term) => {
      const prev = term.previous;
      const e = await o.chain.append(LEADER_SOURCE, LEADER_KIND, {
        controller: o.nodeId,
        epoch: term.epoch,
        previous: prev === null ? null : { controller: prev.holder, epoch: prev.epoch, event: prev.event },
        // The takeover names the term it ends, in the other controller's chain (when that one chained it).
        ...(prev === null || prev.event === null
          ? {}
          : { refers_to: [{ controller: prev.holder, event: prev.event, kind: LEADER_KIND }] }),
      });
      return e.hash;
    },
    onChange: (s) => {
      o.log.info('leadership', {
        leading: s.leading,
        leader: s.leader,
        epoch: s.epoch,
        last_error: s.lastError,
        // A lost lease: when this controller stopped acting as leader (its own count), however late
        // the loss is logged (a daemon blocked in a synchronous store call notices it late).
        ...(s.leading || s.actsUntilMs === 0 ? {} : { acted_until: new Date(s.actsUntilMs).toISOString() }),
      });
      if (s.leading) o.onLeading();
    },
  });
  elector.start();
  return {
    elector,
    status: () => elector.status(),
    stop: async () => {
      await elector.stop();
      await lease.close().catch(() => undefined);
    },
  };
}
