// A real control plane for tests (SQLite store, chain file, gate) in a temporary directory, with
// fixed keys, an open policy and trust anchors: exported as `@heddle/control-plane/testing`.
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { type KeyPair, keyPairFromSecret, toHex } from '@heddle/envelope';
import { ApprovalQueue, FileApprovalStore, Gate, type Policy, parsePolicy, systemClock } from '@heddle/gate';
import { NO_REVOCATIONS, TrustAnchors } from '@heddle/package';
import { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { PlaneError } from './errors.js';
import type { NodeDriver } from './node-driver.js';
import { SqliteStateStore } from './sqlite-store.js';

export const controllerKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x81));
export const publisherKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x82));
/** The operator key hosts and controller trust for revocation lists. */
export const operatorKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x83));

/** The trust anchors of test hosts and controllers: the publisher and the operator. */
export function testAnchors(): TrustAnchors {
  return new TrustAnchors([
    { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
    { id: 'operator', role: 'operator', publicKey: toHex(operatorKeys.publicKey) },
  ]);
}

/** Permits every action on cogs, any network. */
export const OPEN_POLICY: Policy = parsePolicy({
  version: 1,
  name: 'control-plane-test',
  rules: [
    {
      id: 'all',
      effect: 'permit',
      actions: [
        'workload.install',
        'workload.place',
        'workload.load',
        'workload.start',
        'workload.stop',
        'workload.unload',
      ],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
});

/** A world-traversable temporary directory (native workloads run as `nobody` under root). */
export function tempDir(prefix = 'heddle-cp-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(d, 0o755);
  return d;
}

/** A control plane in `dir` (a fresh one by default), with its SQLite store and chain there. */
export interface TestPlane {
  readonly plane: ControlPlane;
  readonly store: SqliteStateStore;
  readonly chain: Chain;
  /** The plane's gate (a test may switch its policy). */
  readonly gate: Gate;
  readonly dir: string;
  close(): Promise<void>;
}

/** More of a test plane. */
export interface OpenPlaneOptions {
  /** Node drivers besides the host's (`ControlPlaneOptions.drivers`). */
  readonly drivers?: readonly NodeDriver[];
  /** The gate's policy (default {@link OPEN_POLICY}). */
  readonly policy?: Policy;
  /**
   * Give the gate and the plane an approval queue kept in `<dir>/approvals.json`, as the daemon
   * does (a deferred place is then held); `ttlMs` is the queue's default ttl.
   */
  readonly approvals?: { readonly ttlMs?: number };
}

/**
 * Opens a control plane in `dir` (SQLite store and chain file there), with the controller's fixed
 * keys, {@link testAnchors}, no revocations, short timeouts (overridden by `config`), the clock `now`.
 */
export async function openPlane(
  dir: string = tempDir(),
  config: ControlPlaneOptions['config'] = {},
  now?: () => number,
  options: OpenPlaneOptions = {},
): Promise<TestPlane> {
  const store = SqliteStateStore.open(join(dir, 'state.db'));
  const chain = await openChainFile(join(dir, 'chain.jsonl'));
  const approvals =
    options.approvals === undefined
      ? undefined
      : new ApprovalQueue({
          store: new FileApprovalStore(join(dir, 'approvals.json')),
          recorder: chain,
          ...(options.approvals.ttlMs === undefined ? {} : { ttlMs: options.approvals.ttlMs }),
          ...(now === undefined ? {} : { clock: { now, setTimer: systemClock.setTimer } }),
        });
  const gate = new Gate({
    policy: options.policy ?? OPEN_POLICY,
    recorder: chain,
    ...(approvals === undefined ? {} : { approvals }),
  });
  const plane = new ControlPlane({
    keys: controllerKeys,
    store,
    chain,
    gate,
    anchors: testAnchors(),
    revocations: NO_REVOCATIONS,
    stateDir: dir,
    config: { reconcileTimeoutMs: 3_000, callTimeoutMs: 5_000, placeTimeoutMs: 20_000, ...config },
    ...(now === undefined ? {} : { now }),
    ...(options.drivers === undefined ? {} : { drivers: options.drivers }),
    ...(approvals === undefined ? {} : { approvals }),
  });
  return {
    plane,
    store,
    chain,
    gate,
    dir,
    close: async () => {
      await plane.close();
      store.close();
      await chain.close();
    },
  };
}

/** The PlaneError a promise rejects with; throws when it resolves or rejects with anything else. */
export async function planeError(promise: Promise<unknown>): Promise<PlaneError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof PlaneError) return err;
  throw new Error(
    `expected a PlaneError, got ${err === undefined ? 'a resolved promise' : err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`,
    { cause: err },
  );
}
