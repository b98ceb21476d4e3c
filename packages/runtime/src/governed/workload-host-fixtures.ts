// Shared by the WorkloadHost tests (not exported from the package): a recording adapter, a signed cog,
// a policy and a host over the real gate and a real memory chain.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Chain, openMemoryChain } from '@heddle/chain';
import { generateKeyPair, type JsonValue, toHex } from '@heddle/envelope';
import { Gate, type NodeTier, type Policy, parsePolicy, type RevocationSet } from '@heddle/gate';
import { buildCogPackage, type CogBody, NO_REVOCATIONS, TrustAnchors, verifyPackage } from '@heddle/package';
import type { Capability } from '@heddle/placement';
import type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceStatus,
  LinkSecurity,
  NetworkExposure,
  Preemption,
  RunEvidence,
  WorkloadRuntime,
} from '../contract.js';
import { RuntimeError } from '../errors.js';
import { deriveInstanceId } from '../instance-id.js';
import { type RuntimeWorkload, type WorkloadConfig, workloadFromPackage } from '../workload.js';
import { WorkloadHost } from './workload-host.js';

/** An adapter that records every call and does what the test sets. */
export class RecordingRuntime implements WorkloadRuntime {
  readonly id: string = 'test';
  readonly route: string = 'native';
  readonly calls: string[] = [];
  network: NetworkExposure = 'lan';
  emulated: boolean = false;
  storeInstalled: boolean = false;
  preemptions: Preemption[] = [];
  /** Method name -> the error it throws. */
  readonly failures: Map<string, Error> = new Map();
  /** Merged into every evidence returned. */
  evidence: Partial<RunEvidence> = {};
  /** Lines returned by `logs`. */
  logLines: string[] = ['line 1'];

  private fail(method: string): void {
    const e = this.failures.get(method);
    if (e !== undefined) throw e;
  }

  private run(instanceId: string, args: string[]): RunEvidence {
    return {
      instanceId,
      args,
      exitCode: 0,
      signal: null,
      startedAtMs: 1_700_000_000_000,
      endedAtMs: 1_700_000_000_050,
      killed: false,
      stdout: 'done\n',
      stdoutTruncatedBytes: 0,
      stderr: '',
      stderrTruncatedBytes: 0,
      notes: [],
      ...this.evidence,
    };
  }

  async provides(): Promise<readonly Capability[]> {
    return [];
  }
  async admit(_w: RuntimeWorkload): Promise<Admission> {
    this.calls.push('admit');
    this.fail('admit');
    return { runtime: 'test', variant: 'x86_64-native', arch: 'x86_64', emulated: this.emulated, notes: [] };
  }
  async load(w: RuntimeWorkload, cfg: WorkloadConfig): Promise<InstanceHandle> {
    this.calls.push('load');
    this.fail('load');
    const instanceId = deriveInstanceId(w.id, w.ref, cfg.values, cfg.runMode, cfg.host.nodeId);
    const handle = { instanceId, runtime: this.id, workloadId: w.id, version: w.version };
    return this.storeInstalled ? { ...handle, storeInstalled: true } : handle;
  }
  async adopt(_h: InstanceHandle, _w: RuntimeWorkload): Promise<void> {
    this.calls.push('adopt');
    this.fail('adopt');
  }
  async start(_h: InstanceHandle): Promise<void> {
    this.calls.push('start');
    this.fail('start');
  }
  async stop(h: InstanceHandle, _graceMs: number): Promise<RunEvidence> {
    this.calls.push('stop');
    this.fail('stop');
    return this.run(h.instanceId, ['/bin/run']);
  }
  async unload(_h: InstanceHandle): Promise<void> {
    this.calls.push('unload');
    this.fail('unload');
  }
  async status(h: InstanceHandle): Promise<InstanceStatus> {
    this.calls.push('status');
    return { instanceId: h.instanceId, state: 'running' };
  }
  async logs(_h: InstanceHandle, lines: number): Promise<readonly string[]> {
    this.calls.push('logs');
    return this.logLines.slice(-lines);
  }
  controlMode(): ControlMode {
    return 'managed';
  }
  linkSecurity(): LinkSecurity {
    return 'local';
  }
  networkExposure(): NetworkExposure {
    return this.network;
  }
  async consolePreemptions(_h: InstanceHandle): Promise<readonly Preemption[]> {
    this.calls.push('consolePreemptions');
    this.fail('consolePreemptions');
    return this.preemptions;
  }
  async preempt(p: Preemption): Promise<void> {
    this.calls.push(`preempt:${p.workloadId}`);
    this.fail(`preempt:${p.workloadId}`);
  }
  async resume(p: Preemption): Promise<void> {
    this.calls.push(`resume:${p.workloadId}`);
    this.fail(`resume:${p.workloadId}`);
  }
  async console(h: InstanceHandle, command: string): Promise<RunEvidence> {
    this.calls.push(`console:${command}`);
    this.fail('console');
    return this.run(h.instanceId, [command]);
  }
}

/** Permits the five host actions on cogs of operator-attested trust or better, on paired nodes, network <= lan. */
export const HOST_POLICY: Policy = parsePolicy({
  version: 1,
  name: 'host-test',
  rules: [
    {
      id: 'cogs-on-paired-nodes',
      effect: 'permit',
      actions: ['workload.install', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'lan',
    },
  ],
});

/** A policy with the given rules. */
export function policyOf(rules: unknown[]): Policy {
  return parsePolicy({ version: 1, name: 'host-test', rules });
}

const NODE_ID = 'a'.repeat(32);

/** A load config (run once), with an ingest token when given. */
export function configFor(token?: string, extra: { ingestUrl?: string } = {}): WorkloadConfig {
  const host = {
    nodeId: NODE_ID,
    dataDir: '/var/lib/heddle/data/demo',
    ...(token === undefined
      ? {}
      : { ingestToken: token, ingestUrl: extra.ingestUrl ?? 'http://127.0.0.1:9/ingest' }),
  };
  return { values: {}, runMode: { type: 'once' }, host };
}

let cached: Promise<RuntimeWorkload> | undefined;

/** A cog package built, signed and verified against a pinned key (built once per test file). */
export function signedCog(): Promise<RuntimeWorkload> {
  cached ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heddle-host-'));
    const src = join(dir, 'src');
    mkdirSync(join(src, 'bin'), { recursive: true });
    writeFileSync(
      join(src, 'cog.json'),
      JSON.stringify({
        id: 'demo-cog',
        version: '1.0.0',
        variants: { 'x86_64-native': 'bin/run.sh', 'aarch64-native': 'bin/run.sh' },
        console: [{ name: 'status' }],
        resources: { cpu_pct: 100, ram_mb: 16 },
      }),
    );
    writeFileSync(join(src, 'bin', 'run.sh'), '#!/bin/sh\necho "demo $1 $2"\n', { mode: 0o755 });
    const keys = generateKeyPair();
    await buildCogPackage(src, join(dir, 'pkg'), { keys: [keys] });
    const anchors = new TrustAnchors([{ id: 'ci', role: 'publisher', publicKey: toHex(keys.publicKey) }]);
    return workloadFromPackage(
      await verifyPackage<CogBody>(join(dir, 'pkg'), { anchors, revocations: NO_REVOCATIONS }),
    );
  })();
  return cached;
}

/** A host over a recording adapter, the real gate and a real memory chain. */
export interface Harness {
  readonly chain: Chain;
  readonly gate: Gate;
  readonly runtime: RecordingRuntime;
  readonly host: WorkloadHost;
}

/** Builds a {@link Harness}. */
export async function harness(
  options: { policy?: Policy; tier?: NodeTier; revocations?: RevocationSet; runtime?: RecordingRuntime } = {},
): Promise<Harness> {
  const chain = await openMemoryChain();
  const gate = new Gate({
    policy: options.policy ?? HOST_POLICY,
    recorder: chain,
    ...(options.revocations === undefined ? {} : { revocations: options.revocations }),
  });
  const runtime = options.runtime ?? new RecordingRuntime();
  const host = new WorkloadHost({
    runtime,
    gate,
    recorder: chain,
    agent: 'host-1',
    nodeTier: options.tier ?? 'paired',
  });
  return { chain, gate, runtime, host };
}

/** A chained event reduced to what the tests compare. */
export interface Seen {
  readonly source: string;
  readonly kind: string;
  readonly p: { readonly [key: string]: JsonValue };
  readonly hash: string;
}

/** The chain's events from `from` on. */
export function seen(chain: Chain, from = 0): Seen[] {
  return chain.range(from).map((e) => ({
    source: e.source,
    kind: e.kind,
    // cast: every record the gate and the host chain has an object payload (a test reads them back).
    p: e.payload as { [key: string]: JsonValue },
    hash: e.hash,
  }));
}

/** `source kind` of each event from `from` on. */
export function trail(chain: Chain, from = 0): string[] {
  return seen(chain, from).map((e) => `${e.source} ${e.kind}`);
}

/**
 * The RuntimeError a promise rejects with. Throws (failing the test) when it resolves or rejects with
 * anything else.
 */
export async function rejection(p: Promise<unknown>): Promise<RuntimeError> {
  const outcome = await p.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if ('error' in outcome && outcome.error instanceof RuntimeError) return outcome.error;
  throw new Error(
    `expected a RuntimeError, got ${'error' in outcome ? String(outcome.error) : 'a resolved promise'}`,
  );
}
