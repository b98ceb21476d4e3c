import type { ChainEvent } from './event.js';

/**
 * A reference from an event of one chain to an event of another (docs/chain.md, "Several
 * controllers"): an event's payload may carry `refers_to`, an array of these.
 */
export interface ChainRef {
  /** The node id of the controller whose chain holds the event, or null when the writer did not know it. */
  readonly controller: string | null;
  /** The referenced event's hash (64 lower-case hex). */
  readonly event: string;
  /** The referenced event's kind, when the writer names it (then it must match). */
  readonly kind?: string | undefined;
}

/** One chain given to {@link verifyCrossReferences}: a name for messages, and its verified events. */
export interface NamedChain {
  readonly name: string;
  readonly events: readonly ChainEvent[];
}

/** A reference that was checked, or could not be. */
export interface CrossRefFinding {
  /** The chain and event (seq, hash) that holds the reference. */
  readonly chain: string;
  readonly seq: number;
  readonly hash: string;
  readonly ref: ChainRef;
  /** Why it fails, or why it could not be checked. */
  readonly reason: string;
}

/** The outcome of {@link verifyCrossReferences}. */
export interface CrossRefReport {
  /** True when no reference failed (unresolved ones do not fail: their chain was not given). */
  readonly ok: boolean;
  /** References found in the given chains, and how many resolved to an event of a given chain. */
  readonly references: number;
  readonly resolved: number;
  /** References to a chain that was not given (or an event of an unnamed controller found in none). */
  readonly unresolved: readonly CrossRefFinding[];
  /** References that are malformed, or that name a given chain which lacks the event (or has it under another kind or controller). */
  readonly failures: readonly CrossRefFinding[];
  /** Each chain's controller: the node id its own events name in `payload.controller`, or null when none does. */
  readonly controllers: readonly { readonly chain: string; readonly controller: string | null }[];
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? // cast: a non-null, non-array object read field by field below
      (v as Record<string, unknown>)
    : undefined;
}

/** The controller a chain belongs to: the `payload.controller` its events name most. */
function controllerOf(events: readonly ChainEvent[]): string | null {
  const counts = new Map<string, number>();
  for (const e of events) {
    const c = obj(e.payload)?.controller;
    if (typeof c === 'string' && HEX32.test(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best: string | null = null;
  let n = 0;
  for (const [c, k] of counts)
    if (k > n) {
      best = c;
      n = k;
    }
  return best;
}

function parseRef(v: unknown): ChainRef | string {
  const o = obj(v);
  if (o === undefined) return 'refers_to: expected objects {controller, event}';
  const { controller, event, kind } = o;
  if (!(controller === null || (typeof controller === 'string' && HEX32.test(controller))))
    return 'refers_to.controller: expected a node id (32 lower-case hex) or null';
  if (typeof event !== 'string' || !HEX64.test(event))
    return 'refers_to.event: expected an event hash (64 lower-case hex)';
  if (kind !== undefined && typeof kind !== 'string') return 'refers_to.kind: expected a string';
  return { controller, event, ...(kind === undefined ? {} : { kind }) };
}

/**
 * Checks the cross-references between chains that each verified on its own: every `refers_to`
 * entry of every event must name an event that exists, in the chain of the controller it names (the
 * chain whose own events name that controller), under the kind it names, written by that controller.
 * A reference with a null controller must be found in one of the given chains. A reference whose
 * chain was not given is reported as unresolved (not a failure).
 */
export function verifyCrossReferences(chains: readonly NamedChain[]): CrossRefReport {
  const controllers = chains.map((c) => ({ chain: c.name, controller: controllerOf(c.events) }));
  const byController = new Map<string, number>();
  controllers.forEach((c, i) => {
    if (c.controller !== null && !byController.has(c.controller)) byController.set(c.controller, i);
  });
  const byHash = new Map<string, { chain: number; event: ChainEvent }>();
  chains.forEach((c, i) => {
    for (const e of c.events) byHash.set(e.hash, { chain: i, event: e });
  });
  const unresolved: CrossRefFinding[] = [];
  const failures: CrossRefFinding[] = [];
  let references = 0;
  let resolved = 0;
  chains.forEach((c) => {
    for (const e of c.events) {
      const refs = obj(e.payload)?.refers_to;
      if (refs === undefined) continue;
      const at = { chain: c.name, seq: e.seq, hash: e.hash };
      if (!Array.isArray(refs)) {
        failures.push({
          ...at,
          ref: { controller: null, event: '' },
          reason: 'refers_to: expected an array',
        });
        continue;
      }
      for (const raw of refs) {
        references++;
        const ref = parseRef(raw);
        if (typeof ref === 'string') {
          failures.push({ ...at, ref: { controller: null, event: '' }, reason: ref });
          continue;
        }
        const found = byHash.get(ref.event);
        if (ref.controller !== null) {
          const idx = byController.get(ref.controller);
          if (idx === undefined) {
            unresolved.push({
              ...at,
              ref,
              reason: `the chain of controller ${ref.controller} was not given`,
            });
            continue;
          }
          const target = chains[idx]?.events.find((x) => x.hash === ref.event);
          if (target === undefined) {
            failures.push({
              ...at,
              ref,
              reason: `controller ${ref.controller}'s chain (${chains[idx]?.name}) has no event ${ref.event}`,
            });
            continue;
          }
          const by = obj(target.payload)?.controller;
          if (by !== undefined && by !== ref.controller) {
            failures.push({
              ...at,
              ref,
              reason: `event ${ref.event} was written for controller ${String(by)}`,
            });
            continue;
          }
          if (ref.kind !== undefined && target.kind !== ref.kind) {
            failures.push({
              ...at,
              ref,
              reason: `event ${ref.event} is a ${target.kind}, not a ${ref.kind}`,
            });
            continue;
          }
          resolved++;
          continue;
        }
        if (found === undefined) {
          unresolved.push({ ...at, ref, reason: `no given chain holds event ${ref.event}` });
          continue;
        }
        if (ref.kind !== undefined && found.event.kind !== ref.kind) {
          failures.push({
            ...at,
            ref,
            reason: `event ${ref.event} is a ${found.event.kind}, not a ${ref.kind}`,
          });
          continue;
        }
        resolved++;
      }
    }
  });
  return { ok: failures.length === 0, references, resolved, unresolved, failures, controllers };
}
