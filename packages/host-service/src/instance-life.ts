import type { JsonValue } from '@heddle/envelope';
import {
  ChainKind,
  InstanceLife,
  LifecycleError,
  type LifecycleState,
  type LifecycleTransition,
  lifecyclePayload,
} from '@heddle/model';

/** What chaining a lifecycle transition needs of the host (a `HostState` fits). */
export interface LifeRecorder {
  readonly nodeId: string;
  readonly now: () => number;
  recordOrReport(kind: string, payload: { [key: string]: JsonValue }): Promise<void>;
  onError: (err: unknown) => void;
}

/** Something with a lifecycle (a `PlacedInstance` fits). */
export interface HasLife {
  readonly life: InstanceLife;
}

/**
 * Moves `holder`'s lifecycle to `to` (at `atMs`, default now) and chains the transition as
 * `workload.lifecycle` (source `workload.host`, side `host`) with `extra` fields and `at_ms`. Returns the
 * transition, or undefined when it was already there (nothing chained). A move the table does not
 * allow is a bug: its `LifecycleError` is told to `onError` (the state is unchanged) rather than
 * turning the answer of a transition that did happen into a refusal.
 */
export async function moveLife(
  host: LifeRecorder,
  holder: HasLife,
  to: LifecycleState,
  reason: string,
  extra: { readonly [key: string]: JsonValue } = {},
  atMs: number = host.now(),
): Promise<LifecycleTransition | undefined> {
  let t: LifecycleTransition | undefined;
  try {
    t = holder.life.to(to, reason, atMs);
  } catch (err) {
    if (err instanceof LifecycleError) {
      host.onError(err);
      return undefined;
    }
    throw err;
  }
  if (t !== undefined) {
    // The transition's own time goes with it: steps of a place are chained a little after they happened.
    const payload = lifecyclePayload(t, 'host', host.nodeId, { ...extra, at_ms: t.at_ms });
    await host.recordOrReport(ChainKind.lifecycle, payload);
  }
  return t;
}

/**
 * Moves through `path` in order, each step as {@link moveLife} with its own time. Used for the steps
 * of a place that are chained once the instance id is known (`placed`, `fetching`, `verified`).
 */
export async function moveLifeThrough(
  host: LifeRecorder,
  holder: HasLife,
  path: readonly { readonly to: LifecycleState; readonly reason: string; readonly atMs: number }[],
  extra: { readonly [key: string]: JsonValue } = {},
): Promise<void> {
  for (const step of path) await moveLife(host, holder, step.to, step.reason, extra, step.atMs);
}

/** A fresh lifecycle for an instance whose place was accepted at `atMs` (state `requested`). */
export function newLife(instanceId: string, atMs: number): InstanceLife {
  return new InstanceLife(instanceId, 'requested', atMs);
}
