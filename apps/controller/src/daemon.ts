import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { errorFields, errorMessage, inputOrSystemError, type Logger, logTornTail } from '@heddle/cli-kit';
import { MetricsServer } from '@heddle/cli-kit/metrics';
import {
  ControlPlane,
  DaemonLoop,
  type PlaneConfig,
  PlaneError,
  type RevocationPushReport,
  type StateStore,
} from '@heddle/control-plane';
import type { LeaderStatus } from '@heddle/control-plane/leader';
import {
  HeddleError,
  type KeyPair,
  loadKeyFile,
  makeDirs,
  nodeIdFromPublicKey,
  readTextBounded,
  toHex,
  writeFileAtomic,
} from '@heddle/envelope';
import { ApprovalQueue, FileApprovalStore, Gate, loadPolicyFile, type Policy } from '@heddle/gate';
import { isGone } from '@heddle/model';
import {
  type ApiInfo,
  ApiInfoSchema,
  ApiServer,
  Authenticator,
  OPERATORS_FILE,
  OperatorStore,
  ReplayGuard,
  Sessions,
} from '@heddle/operator-api';
import {
  loadTrustFile,
  RevocationHolder,
  RevocationList,
  type RevocationListFile,
  type TrustAnchors,
} from '@heddle/package';
import { seedDriver } from '@heddle/seed-adapter/controller';
import { planeHandlers } from './api-handlers.js';
import { badInput, CliError, ExitCode } from './cli-error.js';
import type { ControllerConfig } from './controller-config.js';
import { ControllerMetrics } from './controller-metrics.js';
import { loadDashboard } from './dashboard.js';
import { API_INFO_FILE, API_TOKEN_FILE } from './home.js';
import { startLeadership } from './leadership.js';
import { remoteTls } from './remote-api.js';
import { openControllerStore, postgresConnection } from './state-open.js';
import { checkStateAgainstChain, type SealCheckOptions, StateSeal } from './state-seal.js';

/** A running controller daemon. */
export interface RunningController {
  readonly nodeId: string;
  /** Where the operator API listens (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** Where `/metrics`, `/healthz` and `/readyz` are served (`metrics_listen`), if anywhere. */
  readonly metricsUrl: string | undefined;
  /** The TLS listener for other machines (`api.remote`): its URL and certificate fingerprint. */
  readonly remote: { readonly url: string; readonly fingerprint: string } | undefined;
  readonly plane: ControlPlane;
  /**
   * One tick now (reload the revocation list and distribute it when it grew, then the plane's
   * lifecycle tick: refresh, reconcile, death, reschedules, orphans, revocation push, settle); ticks
   * never overlap.
   */
  tick(reason: string): Promise<void>;
  /** Graceful shutdown (idempotent): stop accepting, finish requests up to the grace, close the store and the chain, remove api.json. */
  stop(reason: string): Promise<void>;
}

function load<T>(field: string, code: string, what: () => T): T {
  try {
    return what();
  } catch (err) {
    throw inputOrSystemError(code, `${field}: ${errorMessage(err)}`, field, err);
  }
}

/** Reads `<home>/api.token`: 64 lower-case hex characters, owner-only. */
export function loadApiToken(home: string): string {
  const path = join(home, API_TOKEN_FILE);
  return load(API_TOKEN_FILE, 'token_invalid', () => {
    if ((statSync(path).mode & 0o077) !== 0)
      throw new Error(`${path} must be owner-only (chmod 600 ${path})`);
    const token = readTextBounded(path, 4096).trim();
    if (!/^[0-9a-f]{64}$/.test(token)) throw new Error(`${path} must hold 64 lower-case hex characters`);
    return token;
  });
}

/** Opens `<home>/operators.json` (missing: no operators); a bad file is refused naming its field. */
function loadOperators(home: string): OperatorStore {
  try {
    return OperatorStore.open(join(home, OPERATORS_FILE));
  } catch (err) {
    const field = err instanceof HeddleError && err.field !== undefined ? err.field : '$';
    throw inputOrSystemError('operators_invalid', `${OPERATORS_FILE}: ${errorMessage(err)}`, field, err);
  }
}

interface Parts {
  readonly keys: KeyPair;
  readonly anchors: TrustAnchors;
  readonly policy: Policy;
  readonly token: string;
  readonly revocations: RevocationHolder;
  readonly operators: OperatorStore;
}

function loadParts(config: ControllerConfig): Parts {
  const keys = load('key_file', 'key_invalid', () => loadKeyFile(config.keyFile));
  const anchors = load('trust_file', 'trust_invalid', () => loadTrustFile(config.trustFile));
  const policy = load('policy_file', 'policy_invalid', () => loadPolicyFile(config.policyFile));
  const token = loadApiToken(config.home);
  const operators = loadOperators(config.home);
  load('data_dir', 'data_dir', () => makeDirs(config.dataDir, 0o700));
  const revocations = new RevocationHolder({
    path: config.revocationList,
    trustedKeys: anchors.operatorKeys(),
  });
  return { keys, anchors, policy, token, revocations, operators };
}

/** The approval queue's file in the controller's data directory. */
export const APPROVALS_FILE = 'approvals.json';

/**
 * Starts the controller from a validated config: loads the key, trust anchors, policy, API token and
 * revocation list; opens the state database and the chain; builds the gate and the control plane;
 * serves the operator API on 127.0.0.1; writes `<home>/api.json`; settles once, then ticks every
 * `refresh_secs`. Throws `CliError` (exit 3, naming the field) for anything the config points at that
 * cannot be used, exit 1 when the port cannot be listened on.
 */
export async function startController(
  config: ControllerConfig,
  log: Logger,
  options: SealCheckOptions = {},
): Promise<RunningController> {
  const parts = loadParts(config);
  if (parts.revocations.list.failure !== undefined) {
    log.warn('the revocation list failed closed: every package is refused until a valid list is in place', {
      revocation_list: config.revocationList,
      failure: parts.revocations.list.failure,
    });
  }
  const store = openControllerStore(config.state);
  if (config.state.kind === 'postgres')
    log.info('state on PostgreSQL', { schema_version: store.schemaVersion });
  let chain: Chain;
  try {
    // Only the newest events in memory; older ones are read back from the file (docs/chain.md).
    chain = await openChainFile(config.chainFile, { retainEvents: 10_000 });
  } catch (err) {
    store.close();
    throw inputOrSystemError(
      'chain_invalid',
      `chain_file: cannot open the chain: ${errorMessage(err)}`,
      'chain_file',
      err,
    );
  }
  logTornTail(chain.openReport.tornTail, log);
  try {
    // Each controller seals the state against its own chain (several may share one state).
    const controller = nodeIdFromPublicKey(parts.keys.publicKey);
    const report = await checkStateAgainstChain(store, chain, { ...options, controller });
    if (report.accepted !== undefined) {
      log.warn(`started on a ${report.accepted} that lost history (accepted by the operator; chained)`, {
        state_seq: report.stateSeq,
        chain_state_seq: report.chainStateSeq ?? null,
      });
    }
    const seal = new StateSeal(store, chain, log, controller);
    await seal.mark();
    return await assemble(config, log, parts, seal.wrap(store), chain, seal);
  } catch (err) {
    store.close();
    await chain.close().catch(() => {});
    throw err;
  }
}

function planeTunables(config: ControllerConfig): Partial<PlaneConfig> {
  return {
    ...config.lifecycle,
    ...(config.placeTimeoutMs === undefined ? {} : { placeTimeoutMs: config.placeTimeoutMs }),
    ...(config.callTimeoutMs === undefined ? {} : { callTimeoutMs: config.callTimeoutMs }),
    ...(config.reconcileTimeoutMs === undefined ? {} : { reconcileTimeoutMs: config.reconcileTimeoutMs }),
  };
}

async function assemble(
  config: ControllerConfig,
  log: Logger,
  p: Parts,
  store: StateStore,
  chain: Chain,
  seal: StateSeal,
): Promise<RunningController> {
  // Deferred places wait in a crash-safe queue in the data directory (docs/operator-guide.md, "Approvals").
  const approvals = new ApprovalQueue({
    store: new FileApprovalStore(join(config.dataDir, APPROVALS_FILE)),
    recorder: chain,
  });
  const gate = new Gate({ policy: p.policy, recorder: chain, revocations: p.revocations, approvals });
  // Tunables are checked by the control plane: a value out of range is named by its section.
  let plane: ControlPlane;
  try {
    plane = new ControlPlane({
      keys: p.keys,
      store,
      chain,
      gate,
      anchors: p.anchors,
      revocations: p.revocations,
      stateDir: config.dataDir,
      config: planeTunables(config),
      drivers: [seedDriver()],
      approvals,
    });
  } catch (err) {
    const message = errorMessage(err);
    const field = /^(deadAfter|suspectAfter|reschedule|maxReschedules|healthTimeout)/.test(message)
      ? 'lifecycle'
      : 'place_timeout_secs';
    throw badInput('config_invalid', `${field}: ${message}`, field, err);
  }
  // One authenticator for every listener: a nonce spent on one cannot be replayed on the other.
  const auth = new Authenticator({ adminToken: p.token, operators: p.operators, replay: new ReplayGuard() });
  let api: ApiServer | undefined;
  let stopped = false;
  let stopping: Promise<void> | undefined;
  const metrics = new ControllerMetrics({
    plane,
    chain,
    revocationGeneration: () => p.revocations.list.generation,
    apiInFlight: () => api?.inFlight ?? 0,
  });
  // Several controllers sharing the state: a newer list another controller stored is put in force
  // here too (its file, and with it this gate), so a package revoked through any of them is refused by all.
  plane.watchSharedRevocations((file, generation) => {
    try {
      const list = RevocationList.parse(JSON.stringify(file), { trustedKeys: p.anchors.operatorKeys() });
      if (list.generation > p.revocations.highestGeneration && p.revocations.accept(list).applied)
        log.info('revocation list of another controller put in force', { generation });
    } catch (err) {
      log.warn('the revocation list another controller stored was not taken', {
        generation,
        ...errorFields(err),
      });
    }
  });
  // Ready: the API listens and is not shutting down, the state store is open, the chain takes appends.
  const ready = () => ({
    api_listening: api !== undefined && stopping === undefined,
    store_open: !stopped,
    chain_writable: !stopped && !chain.readOnly,
  });
  // Who leads (several controllers), once the leadership has started below.
  const leading: { status: (() => LeaderStatus) | undefined } = { status: undefined };
  const handlers = planeHandlers(plane, {
    leadership: () => leading.status?.(),
    applyRevocations: (list) => applyRevocations(p, plane, list),
    aroundPlace: (run) => metrics.place(run),
    operators: p.operators,
    chain,
  });
  const ui = loadDashboard();
  if (ui === undefined) log.warn('the dashboard is not built: /ui/ is not served (run the controller build)');
  // One set of dashboard sessions for both listeners.
  const sessions = new Sessions();
  const dashboard = { events: plane.events, sessions, ...(ui === undefined ? {} : { ui }) };
  // One of several controllers: its nodes are unreachable-until-described, so it describes them once
  // before it listens (a place it answered meanwhile would be unplaceable; another controller serves).
  if (config.leader !== undefined) await plane.refreshNodes();
  try {
    api = await ApiServer.listen({
      auth,
      log,
      port: config.api.port,
      handlers,
      ready,
      onRequest: (e) => metrics.onRequest(e),
      ...dashboard,
    });
  } catch (err) {
    throw new CliError(
      'listen_failed',
      `api.port: cannot listen on ${config.api.host}:${config.api.port}: ${errorMessage(err)}`,
      ExitCode.checkFailed,
      { field: 'api.port', cause: err },
    );
  }
  const server = api;
  let remoteApi: ApiServer | undefined;
  let remote: { url: string; fingerprint: string } | undefined;
  if (config.api.remote !== undefined) {
    const r = config.api.remote;
    try {
      const { tls, fingerprint } = remoteTls(config.home, r);
      try {
        remoteApi = await ApiServer.listen({
          auth,
          log,
          port: r.port,
          host: r.host,
          tls,
          handlers,
          ready,
          onRequest: (e) => metrics.onRequest(e),
          ...dashboard,
        });
      } catch (err) {
        throw new CliError(
          'listen_failed',
          `api.remote: cannot listen on ${r.host}:${r.port}: ${errorMessage(err)}`,
          ExitCode.checkFailed,
          { field: 'api.remote.port', cause: err },
        );
      }
      remote = { url: remoteApi.url, fingerprint };
    } catch (err) {
      await server.close(0);
      throw err;
    }
  }
  let metricsServer: MetricsServer | undefined;
  if (config.metricsListen !== undefined) {
    const { host, port } = config.metricsListen;
    try {
      metricsServer = await MetricsServer.listen({ registry: metrics.registry, ready, host, port });
    } catch (err) {
      await Promise.all([server.close(0), remoteApi?.close(0)]);
      throw new CliError(
        'listen_failed',
        `metrics_listen: cannot listen on ${host}:${port}: ${errorMessage(err)}`,
        ExitCode.checkFailed,
        { field: 'metrics_listen', cause: err },
      );
    }
  }
  const nodeId = nodeIdFromPublicKey(p.keys.publicKey);
  const infoPath = join(config.home, API_INFO_FILE);
  const info: ApiInfo = {
    url: server.url,
    pid: process.pid,
    node_id: nodeId,
    ...(remote === undefined ? {} : { remote }),
  };
  writeFileAtomic(infoPath, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  log.info('listening', {
    node_id: nodeId,
    public_key: toHex(p.keys.publicKey),
    url: server.url,
    metrics_url: metricsServer === undefined ? null : `${metricsServer.url}/metrics`,
    log_level: log.level,
    dashboard: ui === undefined ? null : `${server.url}/ui/`,
    api_file: infoPath,
    ...(remote === undefined ? {} : { remote_url: remote.url, remote_fingerprint: remote.fingerprint }),
    operators: p.operators.list().length,
    nodes: plane.nodes().length,
    instances: plane.instances().filter((i) => !isGone(i.state)).length,
    unsettled: plane.unsettled().length,
    policy: p.policy.name,
    trust_anchors: p.anchors.anchors.length,
    revocation_generation: p.revocations.list.generation,
    refresh_secs: config.refreshSecs,
  });

  // Several controllers: only the holder of the database lease ticks (and ticks at once on winning it).
  let loop: DaemonLoop | undefined;
  const leadership =
    config.leader === undefined
      ? undefined
      : startLeadership({
          // Without leader_database_url the config holds a leader only for a PostgreSQL state.
          connection:
            config.leader.databaseUrl ??
            (config.state.kind === 'postgres' ? postgresConnection(config.state) : ''),
          refreshMs: config.leader.refreshMs,
          nodeId,
          chain,
          log,
          onLeading: () => void loop?.tick('leader'),
        });
  leading.status = leadership === undefined ? undefined : () => leadership.status();
  loop = new DaemonLoop({
    plane,
    log,
    intervalMs: config.refreshSecs * 1000,
    revocations: p.revocations,
    ...(leadership === undefined
      ? {}
      : {
          leadership: leadership.elector,
          // The first tick of a term: what the failover benchmark times from a leader's death.
          onTick: (reason: string) => {
            if (reason === 'leader') log.info('leader tick', { epoch: leadership.elector.epoch });
          },
        }),
  });
  loop.start();
  const ticker = loop;

  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      // The timer stops now; a tick in progress is awaited once the API is closed.
      const loopStopped = ticker.stop();
      log.info('shutting down', { reason, in_flight: server.inFlight, grace_secs: config.shutdownGraceSecs });
      await Promise.all(
        [server, remoteApi].map((s) =>
          s
            ?.close(config.shutdownGraceSecs * 1000)
            .catch((err: unknown) => log.error('closing the API failed', errorFields(err))),
        ),
      );
      await loopStopped;
      // The lease is given up once no tick runs here: another controller takes over at once.
      await leadership?.stop();
      await plane.close();
      removeInfo(infoPath);
      await seal.flush();
      stopped = true;
      await metricsServer?.close();
      try {
        store.close();
      } catch (err) {
        log.error('closing the state store failed', errorFields(err));
      }
      await chain.close().catch((err: unknown) => log.error('closing the chain failed', errorFields(err)));
    })();
    return stopping;
  };
  return {
    nodeId,
    url: server.url,
    metricsUrl: metricsServer?.url,
    remote,
    plane,
    tick: (reason) => ticker.tick(reason),
    stop,
  };
}

/**
 * `POST /v1/revocations`: the controller's own copy is kept in step first (verified against its
 * operator keys and taken by `RevocationHolder.accept`: an older list, another list at the held
 * generation, a list that drops an entry or jumps too far is refused as `invalid_input` naming the
 * field; a newer one is saved crash-safely to `revocation_list` and put in force, so its gate refuses
 * the revoked references at once), then the plane distributes it.
 */
async function applyRevocations(
  p: Parts,
  plane: ControlPlane,
  file: RevocationListFile,
): Promise<RevocationPushReport> {
  let list: RevocationList;
  try {
    list = RevocationList.parse(JSON.stringify(file), { trustedKeys: p.anchors.operatorKeys() });
    p.revocations.accept(list);
  } catch (err) {
    const field = err instanceof HeddleError ? err.field : undefined;
    throw new PlaneError('invalid_input', `revocation list: ${errorMessage(err)}`, {
      field: field === undefined ? 'list' : `list.${field}`,
      cause: err,
    });
  }
  return plane.pushRevocations(list.toJSON());
}

/** Removes api.json when it is this process's (another daemon may have replaced it). */
function removeInfo(path: string): void {
  try {
    const info = ApiInfoSchema.safeParse(JSON.parse(readTextBounded(path, 64 * 1024)));
    if (info.success && info.data.pid === process.pid) rmSync(path, { force: true });
  } catch {
    // Already gone, or not ours to remove.
  }
}
