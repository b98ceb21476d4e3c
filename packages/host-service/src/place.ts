import { join } from 'node:path';
import { deriveInstanceId, parseVariantName } from '@heddle/model';
import type { ObtainedPackage, PackageFetcher } from '@heddle/package';
import {
  type CtlRequest,
  type PlaceAnswer,
  type PlaceBody,
  parseRequestBody,
  Refusal,
} from '@heddle/protocol';
import { type InstanceHandle, type WorkloadHost, workloadFromPackage } from '@heddle/runtime';
import type { FetchOptions } from '@heddle/wire';
import { WireError } from '@heddle/wire';
import { HOST_KINDS, type HostState } from './host-state.js';
import { moveLife, moveLifeThrough, newLife } from './instance-life.js';
import {
  instanceView,
  newSupervision,
  type PlacedInstance,
  readStatus,
  resetSupervision,
} from './instance-record.js';
import { refusalOf } from './refusal-map.js';

/** What a place needs from its call: the fetch back to the controller over the same connection. */
export interface PlaceCall {
  /** Fetches the package with a manifest hash into a fresh directory (the call's `fetchPackage`). */
  readonly fetchPackage?: (manifestHash: string, destDir: string, options?: FetchOptions) => Promise<string>;
}

const refuse = (code: Refusal['code'], reason: string, field?: string): Refusal =>
  new Refusal(code, reason, { authenticated: true, ...(field === undefined ? {} : { field }) });

/**
 * `workload.place` and `workload.load` (docs/protocol.md section 14.2): checks the body; picks the route's adapter (none:
 * `admission`); fetches the package over the call's connection unless it is held, and verifies it
 * against this node's anchors, kinds and revocations (`fetch` / `verify`); requires the package id to
 * be the placed name and the chosen variant to be the one this node's adapter would run; loads through
 * the WorkloadHost (admission, then the gate, then the adapter); starts when asked (a failed start
 * unloads, and says so if that failed too); chains `workload.place`; and compares the revocation list
 * before and after, tearing down and refusing (`governance`) a place that raced a revocation.
 *
 * The instance id is derived from (package id, config, run mode, node), so placing the same thing
 * again is idempotent: the existing instance is reported (`already_placed: true`) and, when the
 * place asks to start and it is not running, started.
 */
export async function placeWorkload(
  state: HostState,
  req: CtlRequest,
  call: PlaceCall,
  fetchOptions: FetchOptions,
): Promise<PlaceAnswer> {
  const decisionId = req.decision_id ?? '';
  const acceptedAtMs = state.now();
  const leave = state.inFlight.enter(decisionId, req.method, acceptedAtMs);
  let held: { readonly hash: string; readonly release: () => void } | undefined;
  let placed = false;
  try {
    const listAtStart = state.revocations.version;
    const method = req.method;
    if (method !== 'workload.place' && method !== 'workload.load') {
      throw refuse('unknown_method', `${method} is not a place`);
    }
    const body = parseRequestBody(method, req.body);
    if (req.method === 'workload.load' && body.start) {
      throw refuse(
        'invalid_request',
        'workload.load body.start: a load never starts; use workload.place',
        'body.start',
      );
    }
    const route = parseVariantName(body.variant)?.route;
    if (route === undefined) {
      throw refuse(
        'invalid_request',
        `body.variant: ${body.variant} is not a variant name (<arch>-<route>, a known arch and route that go together)`,
        'body.variant',
      );
    }
    const host = state.routes.get(route);
    if (host === undefined) {
      throw refuse('admission', `no ${route} adapter on this node for ${body.variant}`, 'body.variant');
    }
    // Held from here until the place ends, so that an unload of another instance of the same
    // package cannot remove it under this one.
    held = { hash: body.manifest_hash, release: state.holdPackage(body.manifest_hash) };
    const fetchingAtMs = state.now();
    const obtained = await obtain(state, body, call, fetchOptions);
    const times = { acceptedAtMs, fetchingAtMs, verifiedAtMs: state.now() };
    const verified = obtained.verified;
    if (verified.kind !== 'cog') {
      throw refuse('admission', `this node places cog packages, not ${verified.kind}`);
    }
    if (verified.body.id !== body.name) {
      throw refuse(
        'verify',
        `the package id ${verified.body.id} differs from the placed name ${body.name}`,
        'body.name',
      );
    }
    const variant = verified.body.variants[body.variant];
    if (variant === undefined || variant.route !== route) {
      throw refuse(
        'invalid_request',
        `body.variant: the package has no ${route} variant ${body.variant}`,
        'body.variant',
      );
    }
    const workload = workloadFromPackage(verified);
    const admission = await host.adapter.admit(workload).catch((err: unknown) => {
      throw refusalOf(err, 'admission');
    });
    if (admission.variant !== body.variant) {
      throw refuse(
        'admission',
        `this node would run variant ${admission.variant}, not ${body.variant}`,
        'body.variant',
      );
    }
    const instanceId = deriveInstanceId(
      workload.id,
      workload.ref,
      body.config.values,
      body.config.mode,
      state.nodeId,
    );
    const answer = await state.locks.run(instanceId, async () => {
      const existing = state.instances.get(instanceId);
      if (existing !== undefined) return again(state, req, body, existing, obtained);
      return fresh(state, req, body, { host, instanceId, route, obtained, listAtStart, workload, times });
    });
    placed = true;
    return answer;
  } catch (err) {
    throw refusalOf(err, req.method);
  } finally {
    held?.release();
    // A package this place brought in but nothing uses (the place was refused) is not kept.
    if (!placed && held !== undefined) state.releasePackage(held.hash);
    leave();
  }
}

async function obtain(
  state: HostState,
  body: PlaceBody,
  call: PlaceCall,
  fetchOptions: FetchOptions,
): Promise<ObtainedPackage> {
  const fetchPackage = call.fetchPackage;
  const fetcher: PackageFetcher = async (hash, dest) => {
    if (fetchPackage === undefined)
      throw refuse('fetch', 'no package source: this call has no connection to fetch over');
    const dir = await fetchPackage(hash, dest, {
      ...fetchOptions,
      checkEnvelope: (pkg) => state.packages.checkEnvelope(pkg),
    });
    // The fetch checked every byte it wrote against the envelope's hashes: the store does not hash
    // the files again (it still checks signatures, revocations, paths, types and sizes).
    return { dir, contentVerified: true };
  };
  try {
    const got = await state.packages.obtain(body.manifest_hash, fetcher);
    if (got.fetched !== null) {
      const v = got.verified;
      await state.record(HOST_KINDS.fetch, {
        node: state.nodeId,
        manifest_hash: v.manifestHash,
        package_id: v.packageId,
        files: v.files.length,
        bytes: v.files.reduce((n, f) => n + f.size, 0),
        ms: Math.round(got.fetched.ms),
      });
    }
    return got;
  } catch (err) {
    if (err instanceof WireError && err.code === 'piece_rejected') {
      await state.record(HOST_KINDS.pieceRejected, {
        node: state.nodeId,
        manifest_hash: body.manifest_hash,
        field: err.field ?? null,
        reason: err.message.slice(0, 512),
      });
    }
    throw err;
  }
}

interface FreshPlace {
  readonly host: WorkloadHost;
  readonly instanceId: string;
  readonly route: PlacedInstance['route'];
  readonly obtained: ObtainedPackage;
  readonly listAtStart: number;
  readonly workload: ReturnType<typeof workloadFromPackage>;
  /** When the place was accepted, its package fetch began, and the package was verified (Unix ms). */
  readonly times: {
    readonly acceptedAtMs: number;
    readonly fetchingAtMs: number;
    readonly verifiedAtMs: number;
  };
}

async function fresh(
  state: HostState,
  req: CtlRequest,
  body: PlaceBody,
  f: FreshPlace,
): Promise<PlaceAnswer> {
  const { host, instanceId, obtained, times } = f;
  // The instance id is known only once the package is verified: the steps before the load are
  // chained now, in the order they happened, each with its own time.
  const life = { life: newLife(instanceId, times.acceptedAtMs) };
  const lifeExtra = {
    workload: f.workload.id,
    decision_id: req.decision_id ?? null,
    requester: req.requester,
  };
  await moveLifeThrough(
    state,
    life,
    [
      { to: 'placed', reason: `${req.method} accepted`, atMs: times.acceptedAtMs },
      // A package this node already holds is verified again from disk, not fetched.
      ...(obtained.fetched === null
        ? []
        : [{ to: 'fetching' as const, reason: 'fetching the package', atMs: times.fetchingAtMs }]),
      {
        to: 'verified',
        reason:
          obtained.fetched === null
            ? "held package verified again against this node's anchors"
            : "package verified against this node's anchors",
        atMs: times.verifiedAtMs,
      },
    ],
    lifeExtra,
  );
  let handle: InstanceHandle;
  try {
    handle = await host.load(f.workload, {
      values: body.config.values,
      runMode: body.config.mode,
      host: { nodeId: state.nodeId, dataDir: join(state.dataRoot, instanceId) },
    });
  } catch (err) {
    await moveLife(state, life, 'failed', `load refused (${refusalOf(err, 'load').code})`, lifeExtra);
    throw err;
  }
  await moveLife(state, life, 'loaded', 'loaded', lifeExtra);
  const placed: PlacedInstance = {
    instanceId,
    handle,
    route: f.route,
    host,
    name: f.workload.id,
    version: f.workload.version,
    variant: body.variant,
    packageId: obtained.verified.packageId,
    manifestHash: obtained.verified.manifestHash,
    mode: body.config.mode,
    values: body.config.values,
    decisionId: req.decision_id ?? '',
    requester: req.requester,
    placedAtMs: state.now(),
    desiredRunning: false,
    lastDecisionId: req.decision_id ?? '',
    life: life.life,
    leaseStopped: false,
    supervision: newSupervision(),
  };
  state.instances.set(instanceId, placed);
  state.persist();
  state.departed.forget(instanceId);
  if (state.revocations.version !== f.listAtStart) {
    await state.enforceRevocationsOf(placed);
    if (!state.instances.has(instanceId)) {
      throw refuse('governance', `revoked while it was being placed: instance ${instanceId} torn down`);
    }
    if (state.revokedSubjectOf(placed) !== undefined) {
      throw refuse(
        'governance',
        `revoked while it was being placed: the teardown of instance ${instanceId} failed, it stays listed`,
      );
    }
  }
  const start = req.method === 'workload.place' && body.start;
  if (start) {
    try {
      await host.start(handle);
      placed.desiredRunning = true;
    } catch (err) {
      await moveLife(state, placed, 'failed', `start failed (${refusalOf(err, 'start').code})`, lifeExtra);
      throw await rollBack(state, placed, err);
    }
    await moveLife(state, placed, 'running', 'started', lifeExtra);
  }
  return report(state, req, placed, obtained, start, false);
}

async function again(
  state: HostState,
  req: CtlRequest,
  body: PlaceBody,
  p: PlacedInstance,
  obtained: ObtainedPackage,
): Promise<PlaceAnswer> {
  let started = false;
  if (req.method === 'workload.place' && body.start) {
    const status = await readStatus(p);
    if (status.state !== 'running') {
      await p.host.start(p.handle);
      started = true;
      resetSupervision(p);
      await moveLife(state, p, 'running', 'started (placed again)', {
        workload: p.name,
        decision_id: req.decision_id ?? null,
        requester: req.requester,
      });
    }
    p.desiredRunning = true;
    p.leaseStopped = false;
  }
  p.lastDecisionId = req.decision_id ?? p.lastDecisionId;
  return report(state, req, p, obtained, started, true);
}

async function report(
  state: HostState,
  req: CtlRequest,
  p: PlacedInstance,
  obtained: ObtainedPackage,
  started: boolean,
  alreadyPlaced: boolean,
): Promise<PlaceAnswer> {
  const status = await readStatus(p);
  // The instance is listed (and maybe running): a record that cannot be chained must not turn the
  // answer into a refusal, or the controller would place it elsewhere too. It is reported instead.
  await state.recordOrReport(HOST_KINDS.place, {
    phase: alreadyPlaced ? 'already_placed' : 'placed',
    method: req.method,
    node: state.nodeId,
    requester: req.requester,
    decision_id: req.decision_id ?? null,
    workload: p.name,
    version: p.version,
    variant: p.variant,
    runtime: p.handle.runtime,
    instance_id: p.instanceId,
    package_id: p.packageId,
    manifest_hash: p.manifestHash,
    fetched: obtained.fetched !== null,
    started,
  });
  return { ...instanceView(p, status), node: state.nodeId, started, already_placed: alreadyPlaced };
}

/**
 * A start that failed after the load: unload, so the host keeps no instance the controller is told
 * was refused. If the unload fails too the instance stays listed (and reconcilable) and the refusal
 * says so. A start refused because the package was revoked meanwhile is torn down by the revocation
 * (not gated).
 */
async function rollBack(state: HostState, p: PlacedInstance, err: unknown): Promise<Refusal> {
  const r = refusalOf(err, 'start');
  const unloaded = await unload(state, p);
  const tail =
    unloaded === true
      ? `loaded instance ${p.instanceId} unloaded`
      : `unload of ${p.instanceId} failed too (${unloaded}); it stays listed`;
  return new Refusal(r.code, `start failed: ${r.reason}; ${tail}`, { authenticated: true, cause: err });
}

async function unload(state: HostState, p: PlacedInstance): Promise<true | string> {
  const handle: InstanceHandle = p.handle;
  try {
    if (state.revokedSubjectOf(p) !== undefined) await state.enforceRevocationsOf(p);
    else {
      await p.host.unload(handle);
      state.instances.delete(p.instanceId);
      state.releasePackage(p.manifestHash);
      await moveLife(state, p, 'unloaded', 'rolled back after a failed start', { workload: p.name });
    }
    return state.instances.has(p.instanceId) ? 'the revocation teardown failed' : true;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
