import type { JsonValue } from '@heddle/envelope';
import { MAX_INTERVAL_SECS, type RunMode } from '@heddle/model';
import { type CogBody, type StorePin, storePinRef, type VerifiedWorkload } from '@heddle/package';
import { RuntimeError } from './errors.js';

/**
 * Where a workload comes from: a signed package that this node verified against its own trust
 * anchors, or a pin of a remote store's cog (a Cognitum Seed's app store) that the operator allowed.
 */
export type WorkloadSource =
  | { readonly type: 'package'; readonly verified: VerifiedWorkload<CogBody> }
  | {
      readonly type: 'store_pin';
      readonly pin: StorePin;
      readonly consoleCommands: readonly string[];
      /** True for a store cog the operator never pinned (seen on a device, not attested): trust `unsigned`. */
      readonly unattested?: boolean;
    };

/**
 * A workload as the runtimes see it: identity, source and the references a revocation can name.
 * Build one with {@link workloadFromPackage} or {@link workloadFromStorePin}, never by hand from
 * unverified input.
 */
export interface RuntimeWorkload {
  /** The cog id (`hello-cog`) or the store's cog id. */
  readonly id: string;
  /** The exact version. */
  readonly version: string;
  /** The package kind (`cog`). */
  readonly kind: string;
  /** The source. */
  readonly source: WorkloadSource;
  /** A stable reference: the package id for packages, `registry/id@version` for store pins. */
  readonly ref: string;
  /** Revocation references: package ids, signer keys (hex), artifact hashes (BLAKE3 hex). */
  readonly packageIds: readonly string[];
  readonly signerKeys: readonly string[];
  readonly artifactHashes: readonly string[];
}

/** The runtime view of a verified cog package. */
export function workloadFromPackage(verified: VerifiedWorkload<CogBody>): RuntimeWorkload {
  return {
    id: verified.body.id,
    version: verified.body.version,
    kind: verified.kind,
    source: { type: 'package', verified },
    ref: verified.packageId,
    packageIds: [verified.packageId],
    signerKeys: [...verified.signerKeys],
    artifactHashes: [...verified.artifactHashes],
  };
}

/**
 * The runtime view of an operator's store pin (already validated with `parseStorePin`).
 * `consoleCommands` are the only console commands a console run may send.
 */
export function workloadFromStorePin(
  pin: StorePin,
  consoleCommands: readonly string[] = [],
): RuntimeWorkload {
  return {
    id: pin.id,
    version: pin.version,
    kind: 'cog',
    source: { type: 'store_pin', pin, consoleCommands: [...consoleCommands] },
    ref: storePinRef(pin),
    packageIds: [],
    signerKeys: [],
    artifactHashes: pin.sha256 === undefined ? [] : [pin.sha256],
  };
}

/**
 * Checks a run mode from untrusted input, the same for every adapter: `interval.secs` must be an
 * integer from 1 to {@link MAX_INTERVAL_SECS}. Refuses with `invalid_config` naming the field.
 */
export function checkRunMode(runMode: RunMode): void {
  if (runMode.type === 'interval') {
    const s = runMode.secs;
    if (!Number.isSafeInteger(s) || s < 1 || s > MAX_INTERVAL_SECS) {
      throw new RuntimeError(
        'invalid_config',
        `runMode.secs: expected an integer from 1 to ${MAX_INTERVAL_SECS}, got ${s}`,
        {
          field: 'runMode.secs',
        },
      );
    }
  } else if (runMode.type !== 'once' && runMode.type !== 'listener') {
    throw new RuntimeError('invalid_config', 'runMode.type: expected once, interval or listener', {
      field: 'runMode.type',
    });
  }
}

/**
 * What the host gives an instance: its environment under the host contract. Only these reach the
 * process (nothing is inherited from the host's own environment). `ingestToken` is a secret: it is
 * never logged, chained or returned in evidence (see {@link hostContractForAudit}).
 */
export interface HostContract {
  /** This node's id. */
  readonly nodeId: string;
  /** The instance's own data directory (absolute); the only place it may write. */
  readonly dataDir: string;
  /** UDP port of the local sensor feed, when the node has one. */
  readonly sensorFeedPort?: number;
  /** Where the instance may post data, when an ingest bridge is configured. */
  readonly ingestUrl?: string;
  /** The instance's own ingest token, when an ingest bridge is configured. */
  readonly ingestToken?: string;
}

/** The host contract as it may be chained: the token replaced by whether one was given. */
export function hostContractForAudit(host: HostContract): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { node_id: host.nodeId, data_dir: host.dataDir };
  if (host.sensorFeedPort !== undefined) out.sensor_feed_port = host.sensorFeedPort;
  if (host.ingestUrl !== undefined) out.ingest_url = host.ingestUrl;
  out.ingest_token = host.ingestToken === undefined ? 'none' : 'set';
  return out;
}

/** What a load is asked for: config values (checked against the package's schema), run mode, host. */
export interface WorkloadConfig {
  /** Config values by field name; validated by the adapter against the cog's config schema. */
  readonly values: Readonly<Record<string, JsonValue>>;
  /** How the instance runs. */
  readonly runMode: RunMode;
  /** The environment the instance gets. */
  readonly host: HostContract;
}
