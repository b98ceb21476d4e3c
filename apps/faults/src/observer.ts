// Reads hosts directly, not through the controller: a signed `workload.status` listing with the
// suite's own observer key (authorised on every host beside the controller), so that the convergence
// check compares what the controller believes with what each host actually holds.
import { randomBytes } from 'node:crypto';
import { Caller, planeConfig } from '@heddle/control-plane';
import type { JsonObject, JsonValue, KeyPair } from '@heddle/envelope';

/** One instance as a host lists it (the fields the suite reads; newer hosts add more). */
export interface HostInstance {
  readonly instance_id: string;
  readonly workload: string;
  readonly mode: { readonly type: string; readonly secs?: number };
  readonly decision_id: string;
  readonly last_decision_id?: string;
  readonly requester?: string;
  /** The adapter's state (`running`, `stopped`, `exited`, ...). */
  readonly state: string;
  readonly desired_running: boolean;
  /** The host's lifecycle state (issue 8 hosts). */
  readonly life?: string;
  readonly adopted?: boolean;
  readonly lease_stopped?: boolean;
}

/** A host's listing: its instances, the decisions in flight, and those that departed. */
export interface HostListing {
  readonly node: string;
  readonly instances: readonly HostInstance[];
  readonly in_flight: readonly { readonly decision_id: string }[];
  readonly departed: readonly { readonly instance_id: string; readonly reason: string }[];
}

/** Where a host is and which key must answer for it. */
export interface HostAddress {
  /** The host's own URL (never a proxy's). */
  readonly url: string;
  readonly nodeId: string;
  /** Its public key, 64 hex. */
  readonly publicKey: string;
}

const object = (v: JsonValue | undefined): Record<string, JsonValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

/** Signed calls to hosts with the observer key. */
export class Observer {
  readonly #caller: Caller;

  constructor(keys: KeyPair) {
    this.#caller = new Caller(keys, planeConfig({ callTimeoutMs: 3_000 }));
  }

  /** The host's listing (instances, in flight, departed); rejects with the wire's CallFailure. */
  async listing(host: HostAddress): Promise<HostListing> {
    const r = await this.#caller.call({
      url: host.url,
      target: host.nodeId,
      method: 'workload.status',
      body: { include_departed: true },
      expectedKey: host.publicKey,
    });
    const o = object(r.result);
    return {
      node: String(o.node ?? host.nodeId),
      // cast: the host's listing as it answered; the convergence checks compare its fields one by one.
      instances: list(o.instances).map((i) => object(i) as unknown as HostInstance),
      in_flight: list(o.in_flight).map((d) => ({ decision_id: String(object(d).decision_id ?? '') })),
      departed: list(o.departed).map((d) => ({
        instance_id: String(object(d).instance_id ?? ''),
        reason: String(object(d).reason ?? ''),
      })),
    };
  }

  /**
   * Stops (grace 0) and unloads one instance on the host directly: for the suite's reset, when the
   * controller does not know the instance. Each call carries a fresh decision id of the observer's. A
   * failed stop (already stopped) does not prevent the unload; a failed unload rejects.
   */
  async remove(host: HostAddress, instanceId: string): Promise<void> {
    const call = (method: 'workload.stop' | 'workload.unload', body: JsonObject) =>
      this.#caller.call({
        url: host.url,
        target: host.nodeId,
        method,
        body,
        decisionId: randomBytes(32).toString('hex'),
        expectedKey: host.publicKey,
      });
    await call('workload.stop', { instance_id: instanceId, grace_ms: 0 }).catch(() => undefined);
    await call('workload.unload', { instance_id: instanceId });
  }
}
