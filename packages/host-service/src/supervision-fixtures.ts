// Helpers of the supervisor and lease tests (not exported from the package): a real host with a
// native route and a supervisor tuned for fast tests, a script cog that exits when told to, and readers
// of the chained lifecycle.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { type JsonValue, toHex } from '@heddle/envelope';
import { Gate } from '@heddle/gate';
import { RevocationHolder, RevocationList, TrustAnchors } from '@heddle/package';
import { AllowListPolicy } from '@heddle/protocol';
import { NativeRuntime, WorkloadHost } from '@heddle/runtime';
import { WireServer } from '@heddle/wire';
import { HostService } from './host-service.js';
import type { ReadinessProbe } from './readiness.js';
import type { SupervisorEvent } from './supervisor.js';
import type { SupervisorOptions } from './supervisor-policy.js';
import {
  type BuiltPackage,
  buildPackage,
  controllerKeys,
  hostKeys,
  OPEN_POLICY,
  publisherKeys,
  tempDir,
} from './test-fixtures.js';

/**
 * The script of the flaky cog: `--life S` makes a run end after S seconds (a listener with exit code
 * 3, a once run with 0); without it a listener runs until stopped. It prints one line per start.
 */
const FLAKY_SCRIPT = `#!/bin/sh
life=
while [ $# -gt 0 ]; do
  case "$1" in
    --once) shift ;;
    --interval) shift 2 ;;
    --life) life="$2"; shift 2 ;;
    --port) shift 2 ;;
    *) shift ;;
  esac
done
echo "flaky-cog started"
if [ -n "$life" ]; then sleep "$life"; exit 3; fi
exec sleep 3600
`;

let versions = 0;

/** Builds and signs the flaky cog (a fresh version each time, so a fresh manifest hash). */
export async function flakyPackage(): Promise<BuiltPackage> {
  const src = join(tempDir('heddle-hs-flaky-'), 'src');
  mkdirSync(join(src, 'bin'), { recursive: true });
  writeFileSync(join(src, 'bin', 'run.sh'), FLAKY_SCRIPT);
  chmodSync(join(src, 'bin', 'run.sh'), 0o755);
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id: 'flaky-cog',
      version: `0.3.${++versions}`,
      variants: { 'x86_64-native': 'bin/run.sh', 'aarch64-native': 'bin/run.sh' },
      config: {
        life: { type: 'string', max_length: 16, description: 'seconds until a run ends' },
        port: { type: 'integer', min: 1, max: 65535, description: 'a TCP port it would serve on' },
      },
      resources: { cpu_pct: 5, ram_mb: 16 },
      source: 'a test cog of @heddle/host-service',
      redistributable: true,
    }),
  );
  return buildPackage(src, publisherKeys);
}

/** A running host with a supervisor, the events it reported and the errors told to `onError`. */
export interface SupervisedHost {
  readonly service: HostService;
  readonly server: WireServer;
  readonly chain: Chain;
  readonly url: string;
  readonly dataDir: string;
  /** Each supervisor event with the wall-clock time it was reported. */
  readonly events: (SupervisorEvent & { readonly at: number })[];
  readonly errors: unknown[];
  close(): Promise<void>;
}

/**
 * Starts a host (native route only, the open policy) on 127.0.0.1 with these supervisor settings, on a
 * fresh data directory or on `dataDir` (a restart: call `service.recover()`).
 */
export async function startSupervisedHost(
  options: {
    supervisor?: SupervisorOptions;
    leaseMs?: number;
    readiness?: ReadinessProbe | false;
    dataDir?: string;
    /** The controller keys the host obeys (default: the test controller's alone). */
    controllers?: readonly Uint8Array[];
  } = {},
): Promise<SupervisedHost> {
  const dataDir = options.dataDir ?? tempDir();
  const chain = await openChainFile(join(dataDir, 'chain.jsonl'));
  const holder = new RevocationHolder(RevocationList.empty());
  const gate = new Gate({ policy: OPEN_POLICY, recorder: chain, revocations: holder });
  const runtime = new NativeRuntime({
    stateDir: join(dataDir, 'native'),
    dataRoot: join(dataDir, 'instances'),
    ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
  });
  const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host', nodeTier: 'paired' });
  const events: (SupervisorEvent & { at: number })[] = [];
  const errors: unknown[] = [];
  const service = new HostService({
    keys: hostKeys,
    controllers: new AllowListPolicy({ publicKeys: options.controllers ?? [controllerKeys.publicKey] }),
    anchors: new TrustAnchors([
      { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
    ]),
    revocations: holder,
    routes: [host],
    recorder: chain,
    dataDir,
    onError: (err) => errors.push(err),
    onSupervision: (e) => events.push({ ...e, at: Date.now() }),
    ...(options.supervisor === undefined ? {} : { supervisor: options.supervisor }),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
  });
  const server = await WireServer.listen({ handler: service.handler });
  return {
    service,
    server,
    chain,
    url: server.url,
    dataDir,
    events,
    errors,
    close: async () => {
      await service.shutdown(1000).catch(() => undefined);
      await server.close();
      await chain.close();
    },
  };
}

/** One chained lifecycle transition of the host. */
export interface ChainedMove {
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly at_ms: number;
  readonly payload: { readonly [key: string]: JsonValue };
}

/** The chained `workload.lifecycle` transitions of `instanceId`, oldest first. */
export function lifeOf(chain: Chain, instanceId: string): ChainedMove[] {
  const out: ChainedMove[] = [];
  for (const e of chain.range(0)) {
    if (e.kind !== 'workload.lifecycle') continue;
    const p = e.payload as { [key: string]: JsonValue };
    if (p.instance_id !== instanceId) continue;
    out.push({
      from: String(p.from),
      to: String(p.to),
      reason: String(p.reason),
      at_ms: Number(p.at_ms),
      payload: p,
    });
  }
  return out;
}

/** `from->to` of each transition, for comparing. */
export const moves = (m: readonly ChainedMove[]): string[] => m.map((t) => `${t.from}->${t.to}`);

/** Polls `what` every 20 ms until `ok` holds or `ms` passed; returns the last value. */
export async function until<T>(what: () => T | Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}
