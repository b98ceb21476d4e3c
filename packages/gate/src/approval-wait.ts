import { resolution } from './approval-resolution.js';
import type { ApprovalRequest } from './approval-store.js';
import type { Clock } from './clock.js';
import type { RecordedDecision } from './recorder.js';

/** What {@link waitForSettlement} needs from the approval queue. */
export interface WaitDeps {
  readonly clock: Clock;
  /** How often to re-read the store (undefined or 0: never). */
  readonly pollMs: number | undefined;
  /** Callbacks to run when a request is settled in this process, by id (the queue calls them). */
  readonly waiters: Map<string, Set<() => void>>;
  /** Reads the request from the store without side effects. */
  peek(id: string): Promise<ApprovalRequest | undefined>;
  /** Reads the request (re-deciding an approval made elsewhere), refusing an unknown id. */
  settled(id: string): Promise<ApprovalRequest>;
  /** Expires the request if it is pending and overdue. */
  expire(id: string): Promise<unknown>;
}

/**
 * Resolves with the decision `first` (a pending request) comes to: when it is settled in this
 * process (a waiter is notified), when polling sees it settled by another process, or when its
 * `expires_at` passes (it is then expired). Every timer is cancelled when it resolves.
 */
export function waitForSettlement(deps: WaitDeps, first: ApprovalRequest): Promise<RecordedDecision> {
  const { clock, waiters } = deps;
  const id = first.id;
  return new Promise<RecordedDecision>((resolve, reject) => {
    const cancels: (() => void)[] = [];
    let done = false;
    const stop = (): boolean => {
      if (done) return false;
      done = true;
      for (const c of cancels) c();
      waiters.get(id)?.delete(finish);
      return true;
    };
    const finish = (): void => {
      if (stop()) deps.settled(id).then((r) => resolve(resolution(r)), reject);
    };
    const fail = (err: unknown): void => {
      if (stop()) reject(err);
    };
    const set = waiters.get(id) ?? new Set<() => void>();
    waiters.set(id, set);
    set.add(finish);
    const arm = (): void => {
      cancels.push(
        clock.setTimer(() => {
          if (clock.now() < first.expires_at) return arm();
          deps.expire(id).then(finish, fail);
        }, first.expires_at - clock.now()),
      );
    };
    arm();
    const poll = deps.pollMs;
    if (poll !== undefined && poll > 0) {
      const tick = (): void => {
        cancels.push(
          clock.setTimer(() => {
            deps.peek(id).then((r) => {
              if (r === undefined || r.state !== 'pending') finish();
              else if (!done) tick();
            }, fail);
          }, poll),
        );
      };
      tick();
    }
  });
}
