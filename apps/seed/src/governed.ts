import { type Chain, openChainFile } from '@heddle/chain';
import { errorMessage } from '@heddle/cli-kit';
import type { JsonValue } from '@heddle/envelope';
import { Gate, type NodeTier } from '@heddle/gate';
import { type InstanceHandle, WorkloadHost } from '@heddle/runtime';
import { SeedApiRuntime, type SeedPin, seedPinWorkload } from '@heddle/seed-adapter';
import { badInput } from './cli-error.js';
import { profilePath } from './home.js';
import { handleOf, readInstalled } from './installed-file.js';
import type { CliIo } from './io.js';
import { pinFor, readPins } from './pins-file.js';
import { policyFor } from './policy.js';
import { openSession, type SeedSession } from './session.js';

/** The agent every gate check of this tool is made as (name it in a policy's `agents`). */
export const SEED_CLI_AGENT = 'heddle-seed';

/** The chain source of this tool's own records (pairing, config changes). */
export const SEED_CLI_CHAIN_SOURCE = 'seed.cli';

/** A profile opened with the governed host: chain, gate, SeedApiRuntime and WorkloadHost. */
export interface Governed extends SeedSession {
  readonly pins: readonly SeedPin[];
  readonly chain: Chain;
  readonly host: WorkloadHost;
  readonly runtime: SeedApiRuntime;
  /** Where the policy came from (`built-in` or the policy file). */
  readonly policySource: string;
  /** The tier the Seed is governed at: `pinned` over pinned TLS, `paired` over the plain local link. */
  readonly tier: NodeTier;
  /** The Seed's node id (from its identity): instance ids are derived on it. */
  readonly nodeId: string;
  /** Closes the chain file. */
  close(): Promise<void>;
}

/** A Seed node id from its identity (instance ids are derived on it). */
export function nodeIdOf(deviceId: string): string {
  const id = deviceId.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 120);
  return id === '' ? 'seed' : `seed-${id}`.slice(0, 128);
}

/**
 * Opens the profile (token required), its pins, audit chain and policy, and builds the WorkloadHost
 * over a `SeedApiRuntime`: every transition is gated and chained. Call `close` when done.
 */
export async function openGoverned(homeFlag: string | undefined, io: CliIo): Promise<Governed> {
  const s = openSession(homeFlag, io, 'required');
  const pins = readPins(s.home);
  const { policy, source } = policyFor(s.home);
  // Reads need no token: check it with a call the Seed authenticates before anything else.
  await s.client.verifyToken();
  const identity = await s.client.identity();
  const nodeId = nodeIdOf(identity.device_id);
  const runtime = new SeedApiRuntime({ api: s.client, pins, nodeId });
  let chain: Chain;
  try {
    chain = await openChainFile(profilePath(s.home, 'chain'));
  } catch (err) {
    throw badInput(
      'chain',
      `${profilePath(s.home, 'chain')}: cannot open the audit chain: ${errorMessage(err)}`,
      'chain',
      err,
    );
  }
  const gate = new Gate({ policy, recorder: chain });
  const tier: NodeTier = s.profile.spki === null ? 'paired' : 'pinned';
  const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: SEED_CLI_AGENT, nodeTier: tier });
  return { ...s, pins, chain, host, runtime, policySource: source, tier, nodeId, close: () => chain.close() };
}

/**
 * The handle of the instance of cog `id` this tool loaded (from `installed.json`), adopted into the
 * host. Refused with `not_loaded` (exit 3) when this tool did not load it, `not_pinned` when its pin
 * was removed since.
 */
export async function adoptOne(g: Governed, id: string): Promise<InstanceHandle> {
  const entry = readInstalled(g.home).find((h) => h.workloadId === id);
  if (entry === undefined) {
    throw badInput(
      'not_loaded',
      `${id} was not loaded by heddle-seed in this profile (load it with: heddle-seed run ${id}@<version>)`,
      'id',
    );
  }
  const handle = handleOf(entry);
  const pin = pinFor(g.pins, id);
  if (pin === undefined)
    throw badInput(
      'not_pinned',
      `${id} is not pinned any more (heddle-seed pin add ${id}@${handle.version})`,
      'id',
    );
  await g.host.adopt(handle, seedPinWorkload(pin));
  return handle;
}

/**
 * Adopts every instance of `installed.json` that is still pinned (for a console run, so that the
 * preemptions name them). One that cannot be adopted is reported on stderr and skipped.
 */
export async function adoptAll(g: Governed, io: CliIo, except?: string): Promise<void> {
  for (const e of readInstalled(g.home)) {
    const h = handleOf(e);
    if (h.workloadId === except || e.pending === true) continue;
    const pin = pinFor(g.pins, h.workloadId);
    if (pin === undefined) continue;
    try {
      await g.host.adopt(h, seedPinWorkload(pin));
    } catch (err) {
      io.err(`heddle-seed: warning: cannot re-attach ${h.workloadId}: ${errorMessage(err)}`);
    }
  }
}

/** Appends one of this tool's own records to the chain (never a secret: callers pass ids and names). */
export async function chainRecord(
  chain: Chain,
  kind: string,
  payload: Record<string, JsonValue>,
): Promise<void> {
  await chain.append(SEED_CLI_CHAIN_SOURCE, kind, payload);
}
