// Helpers shared by the tests of this package (not exported from the index).
import { blake3Hex, canonicalBytes, type JsonValue } from '@heddle/envelope';
import type { GateContext } from './context.js';
import type { Policy, PolicyRule } from './policy.js';
import type { DecisionRecorder } from './recorder.js';

/** One recorded event. */
export interface TestEvent {
  readonly source: string;
  readonly kind: string;
  readonly payload: JsonValue;
  readonly hash: string;
}

/** A recorder that keeps events in memory, hash-linked, and insists on canonical (integers-only) payloads. */
export class TestRecorder implements DecisionRecorder {
  readonly events: TestEvent[] = [];
  fail = false;

  async append(source: string, kind: string, payload: JsonValue): Promise<{ hash: string }> {
    if (this.fail) throw new Error('disk full');
    const prev = this.events.at(-1)?.hash ?? '0'.repeat(64);
    const hash = blake3Hex(canonicalBytes({ source, kind, payload, prev }));
    this.events.push({ source, kind, payload, hash });
    return { hash };
  }

  last(): TestEvent {
    const e = this.events.at(-1);
    if (!e) throw new Error('no events');
    return e;
  }
}

/** A context that the default policy permits for every action but revoke. */
export const BASE: GateContext = {
  kind: 'cog',
  package_trust: 'operator_attested',
  node_tier: 'paired',
  network: 'lan',
  secrets: false,
  emulated: false,
  resource_cost: 0.25,
  package_id: 'acme/sensor@1.0.0',
  signer_keys: ['a1'.repeat(32)],
  artifact_hashes: ['b2'.repeat(32)],
};

/** `BASE` with some fields changed. */
export function ctx(over: Partial<Record<keyof GateContext, unknown>> = {}): GateContext {
  return { ...BASE, ...over } as GateContext;
}

/** A one-rule policy. */
export function policyOf(...rules: PolicyRule[]): Policy {
  return { version: 1, name: 'test', rules };
}
