import { chmodSync, existsSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import {
  badInput,
  CliError,
  ExitCode,
  errorFields,
  errorMessage,
  inputOrSystemError,
  type Logger,
  logTornTail,
  systemCliError,
} from '@heddle/cli-kit';
import { MetricsServer } from '@heddle/cli-kit/metrics';
import {
  type KeyPair,
  loadKeyFile,
  makeDirs,
  nodeIdFromPublicKey,
  readFileBounded,
  toHex,
} from '@heddle/envelope';
import { DEFAULT_POLICY, Gate, loadPolicyFile, type Policy } from '@heddle/gate';
import { HostService } from '@heddle/host-service';
import type { CogRoute } from '@heddle/model';
import { RevocationHolder } from '@heddle/package';
import { AllowListPolicy } from '@heddle/protocol';
import {
  ContainerRuntime,
  NativeRuntime,
  WasiRuntime,
  WorkloadHost,
  type WorkloadRuntime,
} from '@heddle/runtime';
import { WireServer, type WireTlsOptions } from '@heddle/wire';
import { logCall } from './call-log.js';
import type { HostConfig } from './config.js';
import { HostMetrics } from './host-metrics.js';
import { loadHostAnchors } from './host-trust.js';
import { nativeRouteWithheld, nativeUserMismatch } from './native-user-check.js';
import { logSupervision } from './supervision-log.js';
import { PROGRAM, VERSION } from './version.js';

/** The chain file under the data directory. */
export const CHAIN_FILE = 'chain.jsonl';

/** The nonce journal under the data directory (docs/protocol.md section 8). */
export const NONCE_JOURNAL_FILE = 'nonces.journal';

/** A running host: the service, its server and its chain. */
export interface RunningHost {
  readonly nodeId: string;
  /** The URL the server listens on. */
  readonly url: string;
  /** Where `/metrics`, `/healthz` and `/readyz` are served (`metrics_listen`), if anywhere. */
  readonly metricsUrl: string | undefined;
  readonly service: HostService;
  /** Re-reads the revocation list and tears down what it revokes (logged). Calls never overlap. */
  checkRevocations(reason: string): Promise<void>;
  /** Graceful shutdown (idempotent): drain, stop instances, close the server and the chain. */
  stop(reason: string): Promise<void>;
}

/** Loads the node key named by the config (`key_file`, exit 3 when missing or not owner-only). */
export function loadNodeKey(config: HostConfig): KeyPair {
  try {
    return loadKeyFile(config.keyFile);
  } catch (err) {
    throw badInput('key_file', `key_file: ${errorMessage(err)}`, 'key_file', err);
  }
}

function loadPolicy(config: HostConfig): Policy {
  if (config.policyFile === undefined) return DEFAULT_POLICY;
  try {
    return loadPolicyFile(config.policyFile);
  } catch (err) {
    throw badInput('policy_invalid', `policy_file: ${errorMessage(err)}`, 'policy_file', err);
  }
}

function loadTls(config: HostConfig): WireTlsOptions | undefined {
  if (config.tls === undefined) return undefined;
  const read = (field: 'cert' | 'key', path: string): Buffer => {
    try {
      return readFileBounded(path, 1024 * 1024);
    } catch (err) {
      throw badInput(
        'tls_invalid',
        `tls.${field}: cannot read ${path}: ${errorMessage(err)}`,
        `tls.${field}`,
      );
    }
  };
  return { cert: read('cert', config.tls.cert), key: read('key', config.tls.key) };
}

function runtimeFor(route: CogRoute, config: HostConfig): WorkloadRuntime {
  const dataRoot = join(config.dataDir, 'instances');
  switch (route) {
    case 'native':
      return new NativeRuntime({
        stateDir: join(config.dataDir, 'native'),
        dataRoot,
        allowHostUser: config.native.allowHostUser,
        ...(config.native.runAsUser === undefined ? {} : { runAsUser: config.native.runAsUser }),
      });
    case 'wasi':
      return new WasiRuntime({ dataRoot });
    case 'container':
      return new ContainerRuntime({ dataRoot });
  }
}

function wildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/**
 * Starts a host from a validated config: loads the key, anchors, policy and revocation list, opens the
 * chain at `<data_dir>/chain.jsonl`, builds one governed WorkloadHost per route and the HostService,
 * and listens. Throws `CliError` (exit 3, naming the field) for anything the config points at that
 * cannot be used, exit 1 when the address cannot be listened on.
 */
export async function startHost(config: HostConfig, log: Logger): Promise<RunningHost> {
  const keys = loadNodeKey(config);
  const nodeId = nodeIdFromPublicKey(keys.publicKey);
  const anchors = loadHostAnchors(config.trustFile);
  const policy = loadPolicy(config);
  const tls = loadTls(config);
  const controllers = new AllowListPolicy({ publicKeys: config.controllers.map((c) => c.publicKey) });
  if (anchors.anchors.length === 0) {
    log.warn('the trust file pins no key: every package is refused until an operator key is pinned', {
      trust_file: config.trustFile,
    });
  }
  if (config.controllers.length === 0) {
    log.warn('no controller is authorised: every request will be refused (unauthorized)', {});
  }
  if (config.routes.includes('native') && process.getuid?.() === 0 && config.native.runAsUser === undefined) {
    log.warn('running as root without native.run_as_user: every native workload will be refused', {});
  }
  const mismatch = nativeUserMismatch({
    routes: config.routes,
    runAsUser: config.native.runAsUser,
    uid: process.getuid?.(),
  });
  if (mismatch !== undefined) log.warn(mismatch, {});
  const withheld = nativeRouteWithheld({
    routes: config.routes,
    runAsUser: config.native.runAsUser,
    uid: process.getuid?.(),
    allowHostUser: config.native.allowHostUser,
  });
  if (withheld !== undefined) log.warn(withheld, {});
  if (config.routes.includes('native') && config.native.runAsUser !== undefined) {
    const closed = untraversable(config.dataDir);
    if (closed !== undefined) {
      log.warn('native workloads run as another user and cannot pass through a directory above data_dir', {
        directory: closed,
        run_as_user: config.native.runAsUser,
        fix: `chmod o+x ${closed}`,
      });
    }
  }
  try {
    for (const d of [config.dataDir, join(config.dataDir, 'instances'), join(config.dataDir, 'native')]) {
      // 0711 whatever the umask (the systemd unit's UMask=0077 would make it 0700): a native workload
      // running as run_as_user must pass through these to reach its own directories.
      const existed = existsSync(d);
      makeDirs(d, 0o711);
      if (!existed) chmodSync(d, 0o711);
    }
  } catch (err) {
    throw inputOrSystemError(
      'data_dir',
      `data_dir: cannot create ${config.dataDir}: ${errorMessage(err)}`,
      'data_dir',
      err,
    );
  }
  let chain: Chain;
  try {
    // Only the newest events in memory; older ones are read back from the file (docs/chain.md).
    chain = await openChainFile(join(config.dataDir, CHAIN_FILE), { retainEvents: 10_000 });
  } catch (err) {
    throw inputOrSystemError(
      'chain',
      `data_dir: cannot open the chain: ${errorMessage(err)}`,
      'data_dir',
      err,
    );
  }
  logTornTail(chain.openReport.tornTail, log);
  try {
    return await assemble(config, log, { keys, nodeId, anchors, policy, tls, controllers, chain });
  } catch (err) {
    await chain.close().catch(() => {});
    throw err;
  }
}

interface Parts {
  readonly keys: KeyPair;
  readonly nodeId: string;
  readonly anchors: ReturnType<typeof loadHostAnchors>;
  readonly policy: Policy;
  readonly tls: WireTlsOptions | undefined;
  readonly controllers: AllowListPolicy;
  readonly chain: Chain;
}

async function assemble(config: HostConfig, log: Logger, p: Parts): Promise<RunningHost> {
  // The generation mark lives in the data dir, not next to the list: whoever can replace the list
  // must not be able to reset the mark and put an older list back.
  const holder = new RevocationHolder({
    path: config.revocationList,
    trustedKeys: p.anchors.operatorKeys(),
    generationFile: join(config.dataDir, 'revocations.generation'),
  });
  if (holder.failure !== undefined) {
    log.warn('the revocation list failed closed: everything is revoked until a valid list is in place', {
      revocation_list: config.revocationList,
      failure: holder.failure,
    });
  }
  const gate = new Gate({ policy: p.policy, recorder: p.chain, revocations: holder });
  const hosts: WorkloadHost[] = [];
  for (const route of config.routes) {
    try {
      hosts.push(
        new WorkloadHost({
          runtime: runtimeFor(route, config),
          gate,
          recorder: p.chain,
          agent: p.nodeId,
          nodeTier: config.tier,
        }),
      );
    } catch (err) {
      throw badInput('route_invalid', `routes: ${route}: ${errorMessage(err)}`, 'routes', err);
    }
  }
  const onError = (where: string) => (err: unknown) => log.error(`${where} error`, errorFields(err));
  // A host whose chain existed before has run before: a missing journal then means it was lost.
  const journalExpected = !p.chain.openReport.created;
  let service: HostService | undefined;
  // Requests wait for the re-adoption of what a previous run placed (answered "not ready" until then).
  let recovered = false;
  let server: WireServer | undefined;
  let stopping: Promise<void> | undefined;
  const metrics = new HostMetrics({
    service: () => service,
    server: () => server,
    chain: p.chain,
    revocationGeneration: () => holder.list.generation,
  });
  // Ready: instances re-adopted, the listener accepting and not shutting down, the chain taking
  // appends, and a revocation list in force (one that failed closed refuses every package).
  const ready = () => ({
    recovered,
    listening: server?.accepting === true && stopping === undefined,
    chain_writable: !p.chain.readOnly,
    revocation_list_valid: holder.failure === undefined,
  });
  let metricsServer: MetricsServer | undefined;
  if (config.metricsListen !== undefined) {
    const { host, port } = config.metricsListen;
    try {
      metricsServer = await MetricsServer.listen({ registry: metrics.registry, ready, host, port });
    } catch (err) {
      throw new CliError(
        'listen_failed',
        `metrics_listen: cannot listen on ${host}:${port}: ${errorMessage(err)}`,
        ExitCode.failed,
        { field: 'metrics_listen', cause: err },
      );
    }
  }
  const closeMetrics = async (): Promise<void> => {
    await metricsServer?.close();
  };
  let wire: WireServer;
  try {
    wire = await WireServer.listen({
      handler: async (signed, ctx) => {
        if (service === undefined || !recovered) throw new Error('the host is not ready');
        return service.handle(signed, ctx);
      },
      host: config.listen.host,
      port: config.listen.port,
      ...(p.tls === undefined ? {} : { tls: p.tls }),
      ...wireLimits(config.limits),
      onError: onError('wire'),
    });
  } catch (err) {
    await closeMetrics();
    throw new CliError(
      'listen_failed',
      `listen: cannot listen on ${config.listen.host}:${config.listen.port}: ${errorMessage(err)}`,
      ExitCode.failed,
      { field: 'listen', cause: err },
    );
  }
  server = wire;
  const address = config.advertiseAddress ?? (wildcard(config.listen.host) ? undefined : wire.url);
  try {
    service = new HostService({
      keys: p.keys,
      controllers: p.controllers,
      anchors: p.anchors,
      revocations: holder,
      routes: hosts,
      recorder: p.chain,
      dataDir: config.dataDir,
      software: { name: PROGRAM, version: VERSION },
      nonceJournal: { path: join(config.dataDir, NONCE_JOURNAL_FILE), expected: journalExpected },
      ...(address === undefined ? {} : { address }),
      ...(config.limits.maxCallsPerSession === undefined
        ? {}
        : { maxCallsPerSession: config.limits.maxCallsPerSession }),
      ...(config.limits.maxPackageBytes === undefined
        ? {}
        : { fetch: { maxTotalBytes: config.limits.maxPackageBytes } }),
      onError: onError('host-service'),
      supervisor: {
        intervalMs: config.supervisor.intervalMs,
        maxRestarts: config.supervisor.maxRestarts,
        windowMs: config.supervisor.windowSecs * 1000,
        backoffInitialMs: config.supervisor.backoffInitialMs,
        backoffMaxMs: config.supervisor.backoffMaxMs,
      },
      ...(config.controllerLeaseSecs === undefined ? {} : { leaseMs: config.controllerLeaseSecs * 1000 }),
      onSupervision: (e) => logSupervision(log, e),
      onCall: (e) => {
        metrics.onCall(e);
        logCall(log, e);
      },
    });
  } catch (err) {
    await wire.close();
    await closeMetrics();
    const message = `cannot build the host service: ${errorMessage(err)}`;
    throw (
      systemCliError(err, { context: message, field: 'data_dir' }) ??
      badInput('config_invalid', message, 'routes', err)
    );
  }
  const svc = service;
  logNonceJournal(svc, journalExpected, log);
  await warnUnusableRoutes(hosts, log);
  await recoverInstances(svc, log);
  recovered = true;
  if (address === undefined) {
    log.warn('listening on a wildcard address without advertise_address: describe advertises no address', {});
  }
  log.info('listening', {
    version: VERSION,
    node_id: p.nodeId,
    public_key: toHex(p.keys.publicKey),
    url: wire.url,
    metrics_url: metricsServer === undefined ? null : `${metricsServer.url}/metrics`,
    log_level: log.level,
    address: address ?? null,
    routes: svc.routes,
    tier: config.tier,
    controllers: config.controllers.length,
    trust_anchors: p.anchors.anchors.length,
    policy: p.policy.name,
    data_dir: config.dataDir,
    controller_lease_secs: config.controllerLeaseSecs ?? null,
  });
  let checking: Promise<void> | undefined;
  const checkRevocations = (reason: string): Promise<void> => {
    checking ??= (async () => {
      try {
        const before = holder.version;
        const torn = await svc.reloadRevocations();
        if (holder.version !== before) {
          log.info('revocation list changed', {
            reason,
            generation: holder.list.generation,
            failure: holder.failure,
            torn_down: torn,
          });
        }
        if (holder.failure !== undefined && holder.version !== before) {
          log.warn('the revocation list failed closed: everything is revoked', { failure: holder.failure });
        }
      } catch (err) {
        log.error('revocation check failed', { reason, ...errorFields(err) });
      } finally {
        checking = undefined;
      }
    })();
    return checking;
  };
  const timer = setInterval(() => void checkRevocations('interval'), config.revocationCheckSecs * 1000);
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      clearInterval(timer);
      // No new connections; sessions already open get their calls answered (new calls on them are
      // refused by the service while it drains).
      wire.stopAccepting();
      log.info('shutting down', {
        reason,
        active_calls: svc.activeCalls,
        grace_secs: config.shutdownGraceSecs,
      });
      try {
        const r = await svc.shutdown(config.shutdownGraceSecs * 1000);
        log.info('instances stopped', { stopped: r.stopped, failed: r.failed });
      } catch (err) {
        log.error('shutdown of the service failed', errorFields(err));
      }
      await checking?.catch(() => {});
      await wire.close().catch((err: unknown) => log.error('closing the server failed', errorFields(err)));
      await closeMetrics();
      await p.chain.close().catch((err: unknown) => log.error('closing the chain failed', errorFields(err)));
    })();
    return stopping;
  };
  return {
    nodeId: p.nodeId,
    url: wire.url,
    metricsUrl: metricsServer?.url,
    service: svc,
    checkRevocations,
    stop,
  };
}

/** The wire server options the config sets (only those it sets: the rest keep the wire's defaults). */
function wireLimits(limits: HostConfig['limits']): {
  maxSessions?: number;
  maxConnectionsPerPeer?: number;
  maxCallsPerSession?: number;
  handshakeTimeoutMs?: number;
  idleTimeoutMs?: number;
} {
  return {
    ...(limits.maxSessions === undefined ? {} : { maxSessions: limits.maxSessions }),
    ...(limits.maxConnectionsPerPeer === undefined
      ? {}
      : { maxConnectionsPerPeer: limits.maxConnectionsPerPeer }),
    ...(limits.maxCallsPerSession === undefined ? {} : { maxCallsPerSession: limits.maxCallsPerSession }),
    ...(limits.handshakeTimeoutMs === undefined ? {} : { handshakeTimeoutMs: limits.handshakeTimeoutMs }),
    ...(limits.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: limits.idleTimeoutMs }),
  };
}

/** The first existing directory from `/` down to `dir` that others may not pass through (no o+x), if any. */
function untraversable(dir: string): string | undefined {
  const parts = resolve(dir)
    .split(sep)
    .filter((p) => p.length > 0);
  let path: string = sep;
  for (const part of parts) {
    path = join(path, part);
    try {
      if ((statSync(path).mode & 0o001) === 0) return path;
    } catch {
      return undefined; // not there yet: created 0711 below
    }
  }
  return undefined;
}

/** Adopts again what a previous run of this host placed, logging each instance adopted, lost or revoked. */
async function recoverInstances(svc: HostService, log: Logger): Promise<void> {
  const r = await svc.recover();
  if (r.problem !== undefined) {
    log.error('the instances file could not be used: set aside, starting with no instance', {
      reason: r.problem.reason,
      kept_as: r.problem.kept_as,
    });
  }
  for (const a of r.adopted)
    log.info('instance adopted', { instance_id: a.instance_id, life: a.life, pid: a.pid });
  for (const l of r.lost) log.warn('instance lost', { instance_id: l.instance_id, reason: l.reason });
  for (const v of r.revoked) {
    log.warn('instance revoked while the host was down: torn down', {
      instance_id: v.instance_id,
      reason: v.reason,
    });
  }
}

/**
 * Logs what opening the nonce journal found; loudly when the host lost track of accepted requests. A
 * journal missing on a first start (`expected` false: the chain was created by this start) is no loss:
 * nothing was accepted before, and the service fences nothing, so nothing is said.
 */
function logNonceJournal(svc: HostService, expected: boolean, log: Logger): void {
  const r = svc.nonceJournalReport;
  if (r === undefined) return;
  if (r.state === 'missing' && !expected) return;
  if (r.state === 'ok') {
    if (r.tornLine) log.warn('the nonce journal had a torn last line (a crash while appending): ignored', {});
    return;
  }
  log.warn(
    'the nonce journal was lost: changes issued before start-up plus the clock skew (30 s) are refused',
    { state: r.state, kept_as: r.keptAs ?? null, reason: r.reason ?? null },
  );
}

/**
 * Warns of each configured route whose adapter probed itself unusable (it offers no `runtime.<id>`
 * capability): the host still runs, but every place on that route is refused by the controller's
 * engine (`node has no capability runtime.<id>`), so an operator must hear why at start-up.
 */
async function warnUnusableRoutes(hosts: readonly WorkloadHost[], log: Logger): Promise<void> {
  for (const h of hosts) {
    const id = h.adapter.route;
    const caps = await h.adapter.provides();
    if (!caps.some((c) => c.id === `runtime.${id}` || c.id.startsWith(`runtime.${id}.`))) {
      log.warn(`route ${id}: its runtime probe failed, so nothing can be placed on it`, {
        route: id,
        hint:
          id === 'wasi'
            ? 'the WASI runner runs as native.run_as_user (nobody on a root host): that user must be able to read the installed heddle-host files'
            : 'see docs/runtimes.md for what this runtime needs',
      });
    }
  }
}
