import type { NodeTier } from '@heddle/model';
import type { ApiClient } from '@heddle/operator-api';
import { HollowError } from './errors.js';
import type { HollowHostEntry } from './fleet.js';

/** What {@link enrolHosts} did. */
export interface EnrolReport {
  /** Hosts the controller added (or already knew with the same key: it then keeps their record). */
  readonly added: number;
  /** Wall time (ms). */
  readonly ms: number;
}

/**
 * Enrols hollow hosts with a controller the way a real host is enrolled (docs/operator-guide.md,
 * "Add the hosts to the controller"): for each host, `POST /v1/nodes` (what `heddle node add <url>
 * --tier <tier> --key <its key>` sends) with its URL and pinned public key, so the controller describes
 * it over a signed call and binds it to that key. `concurrency` requests at a time (default 16),
 * each host tried up to `attempts` times (default 3: a busy controller may time an add out). Rejects
 * with `enrol_failed` (naming the host) when a host's last attempt fails.
 */
export async function enrolHosts(
  client: ApiClient,
  hosts: readonly HollowHostEntry[],
  options: { tier: NodeTier; concurrency?: number; attempts?: number },
): Promise<EnrolReport> {
  const t0 = performance.now();
  let next = 0;
  let added = 0;
  const worker = async (): Promise<void> => {
    while (next < hosts.length) {
      // cast: next < hosts.length
      const h = hosts[next++] as HollowHostEntry;
      // A busy controller may time an add out: each host is tried up to `attempts` times.
      for (let attempt = 1; ; attempt++) {
        try {
          const node = await client.addNode(h.url, { tier: options.tier, key: h.public_key });
          if (node.node_id !== h.node_id) {
            throw new Error(`the controller recorded node ${node.node_id}, expected ${h.node_id}`);
          }
          added++;
          break;
        } catch (err) {
          if (attempt < (options.attempts ?? 3)) continue;
          throw new HollowError(
            'enrol_failed',
            `host ${h.index} (${h.url}), ${attempt} attempts: ${err instanceof Error ? err.message : String(err)}`,
            'hosts',
            err,
          );
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 16, hosts.length) }, worker));
  return { added, ms: performance.now() - t0 };
}
