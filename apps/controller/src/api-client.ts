import { join } from 'node:path';
import type {
  AlertRecord,
  NodeView,
  PlacementRecord,
  PlaceOrderInput,
  PlaceResult,
  SettleReport,
  TransferProgress,
  UnsettledRecord,
} from '@heddle/control-plane';
import { HeddleError, type JsonValue, readTextBounded } from '@heddle/envelope';
import type { NodeTier } from '@heddle/model';
import { type ApiErrorBody, type ApiHealth, type ApiInfo, NDJSON } from './api/types.js';
import { API_INFO_FILE, API_TOKEN_FILE } from './home.js';
import { type HttpAnswer, httpRequest } from './http-request.js';

/**
 * A failure reported by the operator API (docs/operator-api.md, "Errors"), or `controller_not_running`
 * when the daemon cannot be found or does not answer (then `status` is 0), or `outcome_unknown` when
 * a request that changes something was sent and its answer was lost (a reset connection, a broken
 * place stream): it may have been done (retry a place with the same idempotency key to find out).
 */
export class ApiError extends HeddleError {
  /** The HTTP status (0 when there was no answer). */
  readonly status: number;
  /** Per-node reasons (node id to reason), for `unplaceable` and `refused`. */
  readonly reasons: Readonly<Record<string, string>>;

  constructor(
    code: string,
    message: string,
    options: {
      status?: number;
      field?: string;
      reasons?: Readonly<Record<string, string>>;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.status = options.status ?? 0;
    this.reasons = options.reasons ?? {};
  }
}

/** Where a client connects and how it authenticates. */
export interface ApiClientOptions {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The bearer token (`<home>/api.token`). */
  readonly token: string;
  /** The home the daemon runs in (only for the hint in `controller_not_running`). */
  readonly home?: string;
  /** Timeout of every call but `place`, in ms (default 120 000). */
  readonly timeoutMs?: number;
}

/** What {@link ApiClient.place} may be told. */
export interface PlaceCallOptions {
  /** Told of the package transfer to each node (uses the NDJSON stream). */
  readonly onProgress?: (p: TransferProgress) => void;
}

/** `{placement, node}`: a placement and the host's own view of the instance. */
export interface InstanceStatus {
  readonly placement: PlacementRecord;
  /** The host's instance view (as its `workload.status` answered). */
  readonly node: JsonValue;
}

/** The last lines of an instance's output. */
export interface InstanceLogs {
  readonly instance_id: string;
  readonly lines: readonly string[];
  readonly truncated: boolean;
}

/** The answer of a stop: the placement and the host's evidence. */
export interface StopResult {
  readonly placement: PlacementRecord;
  readonly evidence: JsonValue;
}

const notRunningHint = (home: string | undefined): string =>
  `start it with 'heddle controller run${home === undefined ? '' : ` --home ${home}`}'`;

/**
 * A typed client of the controller's operator API (docs/operator-api.md): one method per route. Every
 * failure rejects with an {@link ApiError} carrying the API's `code`, `message`, `field` and `reasons`.
 */
export class ApiClient {
  readonly #url: string;
  readonly #token: string;
  readonly #home: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.#url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#home = options.home;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  /**
   * A client of the daemon running in `home`: reads `<home>/api.json` (where it listens) and
   * `<home>/api.token`. Throws `ApiError` `controller_not_running` when api.json is missing or
   * unreadable, `unauthorized` when the token file cannot be read.
   */
  static fromHome(home: string, options: { timeoutMs?: number } = {}): ApiClient {
    let info: ApiInfo;
    try {
      info = JSON.parse(readTextBounded(join(home, API_INFO_FILE), 64 * 1024)) as ApiInfo;
      if (typeof info.url !== 'string') throw new Error(`${API_INFO_FILE} has no url`);
    } catch (err) {
      throw new ApiError(
        'controller_not_running',
        `no controller is running in ${home} (${(err as Error).message}); ${notRunningHint(home)}`,
        { cause: err },
      );
    }
    let token: string;
    try {
      token = readTextBounded(join(home, API_TOKEN_FILE), 4096).trim();
    } catch (err) {
      throw new ApiError(
        'unauthorized',
        `cannot read the API token ${join(home, API_TOKEN_FILE)}: ${(err as Error).message} (run heddle as the user that ran 'heddle init')`,
        { cause: err },
      );
    }
    return new ApiClient({ url: info.url, token, home, ...options });
  }

  /** The API's base URL. */
  get url(): string {
    return this.#url;
  }

  /** `GET /v1/health`: the controller's node id and counts of nodes, live instances and unsettled decisions. */
  health(): Promise<ApiHealth> {
    return this.#call<ApiHealth>('GET', '/v1/health');
  }

  /** `GET /v1/nodes`: every known node. */
  async nodes(): Promise<NodeView[]> {
    return (await this.#call<{ nodes: NodeView[] }>('GET', '/v1/nodes')).nodes;
  }

  /**
   * `POST /v1/nodes`: learns the host at `url` (`ws://` or `wss://`) by a signed describe, under
   * `tier`; with `key` (64 hex) only that key is accepted, otherwise the answering key is trusted on
   * first use.
   */
  async addNode(url: string, options: { tier: NodeTier; key?: string }): Promise<NodeView> {
    const body = { url, tier: options.tier, ...(options.key === undefined ? {} : { key: options.key }) };
    return (await this.#call<{ node: NodeView }>('POST', '/v1/nodes', body)).node;
  }

  /** `POST /v1/nodes/seed`: registers a Cognitum Seed (TLS pinned to `spki`, its token in `token_file`). */
  async addSeed(options: {
    url: string;
    spki: string;
    token_file: string;
    tier: NodeTier;
    allow_plain_http?: boolean;
  }): Promise<NodeView> {
    return (await this.#call<{ node: NodeView }>('POST', '/v1/nodes/seed', options)).node;
  }

  /** `POST /v1/nodes/refresh`: describes every known node again; returns them all. */
  async refreshNodes(): Promise<NodeView[]> {
    return (await this.#call<{ nodes: NodeView[] }>('POST', '/v1/nodes/refresh', {})).nodes;
  }

  /** `GET /v1/nodes/<id>`: one node (`unknown_node` otherwise). */
  async node(nodeId: string): Promise<NodeView> {
    return (await this.#call<{ node: NodeView }>('GET', `/v1/nodes/${enc(nodeId)}`)).node;
  }

  /** `DELETE /v1/nodes/<id>`: forgets a node (refused while it has placements, unless `force`); returns it. */
  async removeNode(nodeId: string, options: { force?: boolean } = {}): Promise<NodeView> {
    const q = options.force === true ? '?force=1' : '';
    return (await this.#call<{ node: NodeView }>('DELETE', `/v1/nodes/${enc(nodeId)}${q}`)).node;
  }

  /** `POST /v1/nodes/<id>/pin`: pins `key` (64 hex) for the node, and optionally a new `tier`. */
  async pinNode(nodeId: string, key: string, tier?: NodeTier): Promise<NodeView> {
    const body = { key, ...(tier === undefined ? {} : { tier }) };
    return (await this.#call<{ node: NodeView }>('POST', `/v1/nodes/${enc(nodeId)}/pin`, body)).node;
  }

  /**
   * `POST /v1/place`: places an order (or decides it only, with `dry_run`). With `onProgress`, the
   * NDJSON stream is used and each package transfer is reported as it goes. No timeout: a place ends
   * when the controller says so (its own place timeout bounds it).
   */
  async place(order: PlaceOrderInput, options: PlaceCallOptions = {}): Promise<PlaceResult> {
    if (options.onProgress === undefined) {
      return this.#call<PlaceResult>('POST', '/v1/place', order, { timeoutMs: 0 });
    }
    const res = await this.#fetch('POST', '/v1/place', order, { timeoutMs: 0, accept: NDJSON });
    if (res.status !== 200 || !(res.header('content-type') ?? '').startsWith(NDJSON)) {
      return this.#answer<PlaceResult>(res);
    }
    const onProgress = options.onProgress;
    let result: PlaceResult | undefined;
    let failure: ApiError | undefined;
    const reading = readLines(res, (line) => {
      const ev = JSON.parse(line) as {
        event?: string;
        result?: PlaceResult;
        error?: ApiErrorBody;
      } & Partial<TransferProgress>;
      if (ev.event === 'progress') {
        onProgress({ node_id: ev.node_id ?? '', bytes: ev.bytes ?? 0, total: ev.total ?? 0 });
      } else if (ev.event === 'result' && ev.result !== undefined) {
        result = ev.result;
      } else if (ev.event === 'error' && ev.error !== undefined) {
        failure = errorOf(ev.error, 200);
      }
    });
    await reading.catch((err: unknown) => {
      throw new ApiError(
        'outcome_unknown',
        `the place stream broke (${(err as Error).message}): the place may have happened`,
        { status: 200, cause: err },
      );
    });
    if (failure !== undefined) throw failure;
    if (result === undefined) {
      throw new ApiError(
        'outcome_unknown',
        'the place stream ended without a result: the place may have happened',
        {
          status: 200,
        },
      );
    }
    return result;
  }

  /** `GET /v1/instances`: every placement the controller knows, unloaded ones included. */
  async instances(): Promise<PlacementRecord[]> {
    return (await this.#call<{ instances: PlacementRecord[] }>('GET', '/v1/instances')).instances;
  }

  /** `GET /v1/instances/<id>`: the placement and the host's view of it (asks the host). */
  instance(instanceId: string): Promise<InstanceStatus> {
    return this.#call<InstanceStatus>('GET', `/v1/instances/${enc(instanceId)}`);
  }

  /** `GET /v1/instances/<id>/logs?lines=N`: the last `lines` (1..10000, default 100) lines of output. */
  logs(instanceId: string, lines?: number): Promise<InstanceLogs> {
    const q = lines === undefined ? '' : `?lines=${lines}`;
    return this.#call<InstanceLogs>('GET', `/v1/instances/${enc(instanceId)}/logs${q}`);
  }

  /** `POST /v1/instances/<id>/start`: starts an instance; returns its placement. */
  async start(instanceId: string): Promise<PlacementRecord> {
    const path = `/v1/instances/${enc(instanceId)}/start`;
    return (await this.#call<{ placement: PlacementRecord }>('POST', path, {})).placement;
  }

  /** `POST /v1/instances/<id>/stop`: stops an instance (after `graceMs`); returns the placement and the host's evidence. */
  stop(instanceId: string, graceMs?: number): Promise<StopResult> {
    const body = graceMs === undefined ? {} : { grace_ms: graceMs };
    return this.#call<StopResult>('POST', `/v1/instances/${enc(instanceId)}/stop`, body);
  }

  /** `POST /v1/instances/<id>/unload`: unloads an instance; returns its placement (now `unloaded`). */
  async unload(instanceId: string): Promise<PlacementRecord> {
    const path = `/v1/instances/${enc(instanceId)}/unload`;
    return (await this.#call<{ placement: PlacementRecord }>('POST', path, {})).placement;
  }

  /** `GET /v1/unsettled`: decisions whose answer was lost and not yet reconciled. */
  async unsettled(): Promise<UnsettledRecord[]> {
    return (await this.#call<{ unsettled: UnsettledRecord[] }>('GET', '/v1/unsettled')).unsettled;
  }

  /** `GET /v1/alerts[?unacknowledged=true]`: lost instances the controller did not move. */
  async alerts(options: { unacknowledged?: boolean } = {}): Promise<AlertRecord[]> {
    const q = options.unacknowledged === true ? '?unacknowledged=true' : '';
    return (await this.#call<{ alerts: AlertRecord[] }>('GET', `/v1/alerts${q}`)).alerts;
  }

  /** `POST /v1/alerts/<id>/ack`: acknowledges an alert; returns it. */
  async ackAlert(alertId: string): Promise<AlertRecord> {
    return (await this.#call<{ alert: AlertRecord }>('POST', `/v1/alerts/${enc(alertId)}/ack`, {})).alert;
  }

  /** `POST /v1/settle`: tries to settle every unsettled decision now; the decision ids by outcome. */
  settle(): Promise<SettleReport> {
    return this.#call<SettleReport>('POST', '/v1/settle', {});
  }

  async #call<T>(method: string, path: string, body?: unknown, o: { timeoutMs?: number } = {}): Promise<T> {
    return this.#answer<T>(await this.#fetch(method, path, body, o));
  }

  async #fetch(
    method: string,
    path: string,
    body: unknown,
    o: { timeoutMs?: number; accept?: string },
  ): Promise<HttpAnswer> {
    const timeoutMs = o.timeoutMs ?? this.#timeoutMs;
    try {
      return await httpRequest(`${this.#url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          accept: o.accept ?? 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        timeoutMs,
      });
    } catch (err) {
      const why = (err as { code?: string }).code ?? (err as Error).message;
      if ((err as { sent?: boolean }).sent === true && method !== 'GET') {
        // The request reached the controller and no answer came back: it may have acted.
        throw new ApiError(
          'outcome_unknown',
          `the connection to the controller at ${this.#url} broke after ${method} ${path} was sent (${why}): it may have been done`,
          { cause: err },
        );
      }
      if ((err as Error).name === 'TimeoutError') {
        throw new ApiError(
          'timeout',
          `the controller at ${this.#url} did not answer ${method} ${path} in ${timeoutMs} ms`,
          {
            cause: err,
          },
        );
      }
      throw new ApiError(
        'controller_not_running',
        `the controller at ${this.#url} does not answer (${why}); ${notRunningHint(this.#home)}`,
        { cause: err },
      );
    }
  }

  async #answer<T>(res: HttpAnswer): Promise<T> {
    const text = await res.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(
        'bad_answer',
        `the controller answered ${res.status} with no JSON: ${text.slice(0, 200)}`,
        {
          status: res.status,
        },
      );
    }
    if (res.ok) return value as T;
    const e = (value as { error?: ApiErrorBody }).error;
    if (e === undefined || typeof e.code !== 'string') {
      throw new ApiError('bad_answer', `the controller answered ${res.status}: ${text.slice(0, 200)}`, {
        status: res.status,
      });
    }
    throw errorOf(e, res.status);
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function errorOf(e: ApiErrorBody, status: number): ApiError {
  return new ApiError(e.code, e.message, {
    status,
    ...(e.field === undefined ? {} : { field: e.field }),
    ...(e.reasons === undefined ? {} : { reasons: e.reasons }),
  });
}

async function readLines(res: HttpAnswer, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line !== '') onLine(line);
      nl = buf.indexOf('\n');
    }
  }
  const rest = (buf + decoder.decode()).trim();
  if (rest !== '') onLine(rest);
}
