import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type {
  AlertRecord,
  ApprovalView,
  ApprovalViewState,
  DrainReport,
  NodeView,
  PlaceOrderInput,
  RevocationPushReport,
  SettleReport,
  TransferProgress,
  UnsettledRecord,
} from '@heddle/control-plane';
import { type KeyPair, readTextBounded } from '@heddle/envelope';
import type { NodeTier } from '@heddle/model';
import type { RevocationListFile } from '@heddle/package';
import type { z } from 'zod';
import type {
  ApiErrorBody,
  ApiHealth,
  ApiInfo,
  InstanceLogs,
  InstanceStatus,
  PlaceAnswer,
  Placement,
  RevocationStatus,
  StopResult,
} from './answer-types.js';
import { ApiErrorAnswerSchema, ApiInfoSchema, PlaceStreamEventSchema } from './answers.js';
import { ApiError } from './api-error.js';
import { formatSignedAuth, signRequest } from './auth-header.js';
import type { ChainEventProofAnswer, ChainHeadAnswer, DecisionAnswer } from './chain-answers.js';
import { API_INFO_FILE, API_TOKEN_FILE, NDJSON, REQUEST_ID_HEADER } from './constants.js';
import { type FollowEventsOptions, followEvents } from './event-follower.js';
import { type HttpAnswer, HttpFailure } from './http-request.js';
import type {
  JobFileBody,
  JobPlanAnswer,
  JobRunAnswer,
  JobStatusAnswer,
  JobVersionAnswer,
} from './job-answers.js';
import { type OperatorRequest, sendOperatorRequest } from './operator-request.js';
import type { AddOperatorAnswer, AddOperatorBody, OperatorView, WhoAmI } from './operator-routes.js';
import { OPERATOR_ROUTES, type RouteDef, routePath } from './routes.js';

/** Where a client connects and how it authenticates. */
export interface ApiClientOptions {
  /** `http://127.0.0.1:<port>`, or `https://<host>:<port>` for a remote controller. */
  readonly url: string;
  /** A bearer token (`<home>/api.token`, or an operator's token); or give `keys`. */
  readonly token?: string | undefined;
  /** An operator's Ed25519 key pair: every request is signed (`Heddle-Ed25519`); or give `token`. */
  readonly keys?: KeyPair | undefined;
  /** For `https://`: the pinned SHA-256 fingerprint of the server's certificate (`sha256:<hex>`). */
  readonly fingerprint?: string | undefined;
  /** The home the daemon runs in (only for the hint in `controller_not_running`). */
  readonly home?: string | undefined;
  /** Timeout of every call but `place`, in ms (default 120 000). */
  readonly timeoutMs?: number | undefined;
}

/** What {@link ApiClient.place} may be told. */
export interface PlaceCallOptions {
  /** Told of the package transfer to each node (uses the NDJSON stream). */
  readonly onProgress?: (p: TransferProgress) => void;
  /**
   * Sent as `x-request-id` (1 to 128 of `[A-Za-z0-9._:-]`, starting with a letter or digit): the
   * controller logs it and carries it to the host. Default: the controller makes one up.
   */
  readonly requestId?: string;
}

const notRunningHint = (home: string | undefined): string =>
  `start it with 'heddle controller run${home === undefined ? '' : ` --home ${home}`}'`;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A zod issue path as an operator reads it: `nodes[0].url`. */
function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out === '' ? '$' : out;
}

/**
 * A validating client of the controller's operator API: one method per route of
 * {@link OPERATOR_ROUTES}. Every answer is parsed with its route's answer schema; an answer that
 * breaks it is refused with {@link ApiError} `bad_answer` naming the field. Every failure the API
 * answers rejects with an `ApiError` carrying its `code`, `message`, `field` and `reasons`.
 */
export class ApiClient {
  readonly #url: string;
  readonly #token: string | undefined;
  readonly #keys: KeyPair | undefined;
  readonly #fingerprint: string | undefined;
  readonly #home: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.#url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#keys = options.keys;
    this.#fingerprint = options.fingerprint;
    if ((options.token === undefined) === (options.keys === undefined))
      throw new TypeError('ApiClient: give exactly one of token and keys');
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
      const r = ApiInfoSchema.safeParse(JSON.parse(readTextBounded(join(home, API_INFO_FILE), 64 * 1024)));
      if (!r.success) throw new Error(`${API_INFO_FILE} is not a daemon's: ${r.error.issues[0]?.message}`);
      info = r.data;
    } catch (err) {
      throw new ApiError(
        'controller_not_running',
        `no controller is running in ${home} (${messageOf(err)}); ${notRunningHint(home)}`,
        { cause: err },
      );
    }
    let token: string;
    try {
      token = readTextBounded(join(home, API_TOKEN_FILE), 4096).trim();
    } catch (err) {
      throw new ApiError(
        'unauthorized',
        `cannot read the API token ${join(home, API_TOKEN_FILE)}: ${messageOf(err)} (run heddle as the user that ran 'heddle init')`,
        { cause: err },
      );
    }
    return new ApiClient({ url: info.url, token, home, ...options });
  }

  /** The API's base URL. */
  get url(): string {
    return this.#url;
  }

  /**
   * Follows `GET /v1/events` (docs/operator-api.md, "Event stream") until `options.signal` aborts,
   * reconnecting with `Last-Event-ID` (see `followEvents`).
   */
  followEvents(
    options: Omit<FollowEventsOptions, 'url' | 'token' | 'authorization' | 'fingerprint'>,
  ): Promise<void> {
    return followEvents({
      ...options,
      url: this.#url,
      authorization: (method, target) => this.#authorization(method, target, ''),
      fingerprint: this.#fingerprint,
    });
  }

  /** `GET /v1/chain`: the audit chain's size, head, Merkle root and a verification. */
  chainHead(): Promise<ChainHeadAnswer> {
    return this.#call(OPERATOR_ROUTES.chainHead, routePath('chainHead'));
  }

  /** `GET /v1/chain/events/:id` (a seq or an event hash): the event and its inclusion proof. */
  chainEvent(id: string): Promise<ChainEventProofAnswer> {
    return this.#call(OPERATOR_ROUTES.chainEvent, routePath('chainEvent', id));
  }

  /** `GET /v1/decisions/:id`: a place decision and its explanation (when the controller kept it). */
  decision(decisionId: string): Promise<DecisionAnswer> {
    return this.#call(OPERATOR_ROUTES.decision, routePath('decision', decisionId));
  }

  /** `GET /v1/health`: the controller's node id and counts of nodes, live instances and unsettled decisions. */
  health(): Promise<ApiHealth> {
    return this.#call(OPERATOR_ROUTES.health, routePath('health'));
  }

  /** `GET /v1/nodes`: every known node. */
  async nodes(): Promise<readonly NodeView[]> {
    return (await this.#call(OPERATOR_ROUTES.listNodes, routePath('listNodes'))).nodes;
  }

  /**
   * `POST /v1/nodes`: learns the host at `url` (`ws://` or `wss://`) by a signed describe, under
   * `tier`; with `key` (64 hex) only that key is accepted, otherwise the answering key is trusted on
   * first use.
   */
  async addNode(url: string, options: { tier: NodeTier; key?: string | undefined }): Promise<NodeView> {
    const body = { url, tier: options.tier, ...(options.key === undefined ? {} : { key: options.key }) };
    return (await this.#call(OPERATOR_ROUTES.addNode, routePath('addNode'), body)).node;
  }

  /** `POST /v1/nodes/seed`: registers a Cognitum Seed (TLS pinned to `spki`, its token in `token_file`). */
  async addSeed(options: {
    url: string;
    spki: string;
    token_file: string;
    tier: NodeTier;
    allow_plain_http?: boolean | undefined;
  }): Promise<NodeView> {
    return (await this.#call(OPERATOR_ROUTES.addSeed, routePath('addSeed'), options)).node;
  }

  /** `POST /v1/nodes/refresh`: describes every known node again; returns them all. */
  async refreshNodes(): Promise<readonly NodeView[]> {
    return (await this.#call(OPERATOR_ROUTES.refreshNodes, routePath('refreshNodes'), {})).nodes;
  }

  /** `GET /v1/nodes/<id>`: one node (`unknown_node` otherwise). */
  async node(nodeId: string): Promise<NodeView> {
    return (await this.#call(OPERATOR_ROUTES.getNode, routePath('getNode', nodeId))).node;
  }

  /** `DELETE /v1/nodes/<id>`: forgets a node (refused while it has placements, unless `force`); returns it. */
  async removeNode(nodeId: string, options: { force?: boolean } = {}): Promise<NodeView> {
    const q = options.force === true ? '?force=1' : '';
    return (await this.#call(OPERATOR_ROUTES.removeNode, `${routePath('removeNode', nodeId)}${q}`)).node;
  }

  /** `POST /v1/nodes/<id>/pin`: pins `key` (64 hex) for the node, and optionally a new `tier`. */
  async pinNode(nodeId: string, key: string, tier?: NodeTier): Promise<NodeView> {
    const body = { key, ...(tier === undefined ? {} : { tier }) };
    return (await this.#call(OPERATOR_ROUTES.pinNode, routePath('pinNode', nodeId), body)).node;
  }

  /** `POST /v1/nodes/<id>/cordon`: no new places go to the node; returns it. */
  async cordonNode(nodeId: string): Promise<NodeView> {
    return (await this.#call(OPERATOR_ROUTES.cordonNode, routePath('cordonNode', nodeId), {})).node;
  }

  /** `POST /v1/nodes/<id>/uncordon`: lifts the cordon; returns the node. */
  async uncordonNode(nodeId: string): Promise<NodeView> {
    return (await this.#call(OPERATOR_ROUTES.uncordonNode, routePath('uncordonNode', nodeId), {})).node;
  }

  /**
   * `POST /v1/nodes/<id>/drain`: cordons the node and moves its instances elsewhere (each move chained);
   * what may not move is left with an alert. No timeout: it ends when every move is done.
   */
  drainNode(nodeId: string): Promise<DrainReport> {
    return this.#call(OPERATOR_ROUTES.drainNode, routePath('drainNode', nodeId), {}, { timeoutMs: 0 });
  }

  /** `POST /v1/nodes/<id>/labels`: sets labels (name to value) and removes others; returns the node. */
  async labelNode(
    nodeId: string,
    change: { set?: Readonly<Record<string, string>>; remove?: readonly string[] },
  ): Promise<NodeView> {
    return (await this.#call(OPERATOR_ROUTES.labelNode, routePath('labelNode', nodeId), change)).node;
  }

  /**
   * `POST /v1/place`: places an order (or decides it only, with `dry_run`). With `onProgress`, the
   * NDJSON stream is used and each package transfer is reported as it goes. No timeout: a place ends
   * when the controller says so (its own place timeout bounds it). A stream that breaks or ends
   * without a result rejects with `outcome_unknown` (retry with the same idempotency key to find out).
   */
  async place(order: PlaceOrderInput, options: PlaceCallOptions = {}): Promise<PlaceAnswer> {
    const path = routePath('place');
    const sent = sendOperatorRequest({
      url: this.#url,
      method: 'POST',
      path,
      ...this.placeRequest(JSON.stringify(order), options),
    });
    return this.placeAnswer(sent, options);
  }

  /**
   * What {@link ApiClient.place} sends besides the URL, method and path (`/v1/place`, `PLACE_PATH`):
   * the `Authorization` (for `body`, the serialised order), `Accept` (the NDJSON stream with
   * `onProgress`), the request id, no timeout, the pinned fingerprint.
   */
  placeRequest(
    body: string,
    options: PlaceCallOptions = {},
  ): Omit<OperatorRequest, 'url' | 'method' | 'path'> {
    return {
      authorization: this.#authorization('POST', routePath('place'), body),
      body,
      ...(options.onProgress === undefined ? {} : { accept: NDJSON }),
      ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
      timeoutMs: 0,
      fingerprint: this.#fingerprint,
    };
  }

  /**
   * Reads the answer of a `POST /v1/place` already sent (by {@link ApiClient.place}, or by a caller
   * that sent the same request with `sendOperatorRequest` before this client was loaded) exactly as
   * `place` does: a failed or broken request becomes the same `ApiError` (`outcome_unknown` once
   * sent, `controller_not_running` otherwise), the answer is validated against the route's schema,
   * and with `onProgress` the NDJSON stream is read and each transfer reported.
   */
  async placeAnswer(sent: Promise<HttpAnswer>, options: PlaceCallOptions = {}): Promise<PlaceAnswer> {
    const route = OPERATOR_ROUTES.place;
    const path = routePath('place');
    const res = await this.#received(sent, 'POST', path, 0);
    if (
      options.onProgress === undefined ||
      res.status !== 200 ||
      !(res.header('content-type') ?? '').startsWith(NDJSON)
    ) {
      return this.#answer(route.answer, res, `POST ${path}`);
    }
    const onProgress = options.onProgress;
    let result: PlaceAnswer | undefined;
    let failure: ApiError | undefined;
    const reading = readLines(res, (line) => {
      const r = PlaceStreamEventSchema.safeParse(JSON.parse(line));
      if (!r.success) {
        throw new Error(`a stream line breaks the contract at ${pathOf(r.error.issues[0]?.path ?? [])}`);
      }
      const ev = r.data;
      if (ev.event === 'progress') onProgress({ node_id: ev.node_id, bytes: ev.bytes, total: ev.total });
      else if (ev.event === 'result') result = ev.result;
      else failure = errorOf(ev.error, 200);
    });
    await reading.catch((err: unknown) => {
      throw new ApiError(
        'outcome_unknown',
        `the place stream broke (${messageOf(err)}): the place may have happened`,
        { status: 200, cause: err },
      );
    });
    if (failure !== undefined) throw failure;
    if (result === undefined) {
      throw new ApiError(
        'outcome_unknown',
        'the place stream ended without a result: the place may have happened',
        { status: 200 },
      );
    }
    return result;
  }

  /** `GET /v1/instances`: every placement the controller knows, unloaded ones included. */
  async instances(): Promise<readonly Placement[]> {
    return (await this.#call(OPERATOR_ROUTES.listInstances, routePath('listInstances'))).instances;
  }

  /** `GET /v1/instances/<id>`: the placement and the host's view of it (asks the host). */
  instance(instanceId: string): Promise<InstanceStatus> {
    return this.#call(OPERATOR_ROUTES.getInstance, routePath('getInstance', instanceId));
  }

  /** `GET /v1/instances/<id>/logs?lines=N`: the last `lines` (1..10000, default 100) lines of output. */
  logs(instanceId: string, lines?: number): Promise<InstanceLogs> {
    const q = lines === undefined ? '' : `?lines=${lines}`;
    return this.#call(OPERATOR_ROUTES.logs, `${routePath('logs', instanceId)}${q}`);
  }

  /** `POST /v1/instances/<id>/start`: starts an instance; returns its placement. */
  async start(instanceId: string): Promise<Placement> {
    return (await this.#call(OPERATOR_ROUTES.start, routePath('start', instanceId), {})).placement;
  }

  /** `POST /v1/instances/<id>/stop`: stops an instance (after `graceMs`); returns the placement and the host's evidence. */
  stop(instanceId: string, graceMs?: number): Promise<StopResult> {
    const body = graceMs === undefined ? {} : { grace_ms: graceMs };
    return this.#call(OPERATOR_ROUTES.stop, routePath('stop', instanceId), body);
  }

  /** `POST /v1/instances/<id>/unload`: unloads an instance; returns its placement (now `unloaded`). */
  async unload(instanceId: string): Promise<Placement> {
    return (await this.#call(OPERATOR_ROUTES.unload, routePath('unload', instanceId), {})).placement;
  }

  /** `GET /v1/unsettled`: decisions whose answer was lost and not yet reconciled. */
  async unsettled(): Promise<readonly UnsettledRecord[]> {
    return (await this.#call(OPERATOR_ROUTES.unsettled, routePath('unsettled'))).unsettled;
  }

  /** `GET /v1/alerts[?unacknowledged=true]`: lost instances the controller did not move. */
  async alerts(options: { unacknowledged?: boolean } = {}): Promise<readonly AlertRecord[]> {
    const q = options.unacknowledged === true ? '?unacknowledged=true' : '';
    return (await this.#call(OPERATOR_ROUTES.listAlerts, `${routePath('listAlerts')}${q}`)).alerts;
  }

  /** `POST /v1/alerts/<id>/ack`: acknowledges an alert; returns it. */
  async ackAlert(alertId: string): Promise<AlertRecord> {
    return (await this.#call(OPERATOR_ROUTES.ackAlert, routePath('ackAlert', alertId), {})).alert;
  }

  /** `GET /v1/revocations`: the generation the controller distributes and each node's acknowledgement. */
  revocations(): Promise<RevocationStatus> {
    return this.#call(OPERATOR_ROUTES.revocations, routePath('revocations'));
  }

  /** `POST /v1/revocations`: gives the controller a signed revocation list to keep and distribute. */
  pushRevocations(list: RevocationListFile): Promise<RevocationPushReport> {
    return this.#call(OPERATOR_ROUTES.pushRevocations, routePath('pushRevocations'), list);
  }

  /** `POST /v1/settle`: tries to settle every unsettled decision now; the decision ids by outcome. */
  settle(): Promise<SettleReport> {
    return this.#call(OPERATOR_ROUTES.settle, routePath('settle'), {});
  }

  /** `GET /v1/approvals[?state=<state>]`: approval requests, oldest first (overdue ones expired first). */
  async approvals(options: { state?: ApprovalViewState } = {}): Promise<readonly ApprovalView[]> {
    const q = options.state === undefined ? '' : `?state=${options.state}`;
    return (await this.#call(OPERATOR_ROUTES.listApprovals, `${routePath('listApprovals')}${q}`)).approvals;
  }

  /** `GET /v1/approvals/<id>`: one approval request and the place it holds (`approval_not_found` otherwise). */
  async approval(approvalId: string): Promise<ApprovalView> {
    return (await this.#call(OPERATOR_ROUTES.getApproval, routePath('getApproval', approvalId))).approval;
  }

  /**
   * `POST /v1/approvals/<id>/approve`: approves a pending request (with an optional `note`, chained);
   * the held place is decided again and proceeds through the engine; answers when it is done.
   */
  async approve(approvalId: string, note?: string): Promise<ApprovalView> {
    const body = note === undefined ? {} : { note };
    return (
      await this.#call(OPERATOR_ROUTES.approve, routePath('approve', approvalId), body, { timeoutMs: 0 })
    ).approval;
  }

  /** `POST /v1/approvals/<id>/reject`: rejects a pending request (with an optional `note`, chained); the held place is refused. */
  async reject(approvalId: string, note?: string): Promise<ApprovalView> {
    const body = note === undefined ? {} : { note };
    return (await this.#call(OPERATOR_ROUTES.reject, routePath('reject', approvalId), body)).approval;
  }

  /** `GET /v1/jobs`: every job as it stands. */
  async jobs(): Promise<readonly JobStatusAnswer[]> {
    return (await this.#call(OPERATOR_ROUTES.listJobs, routePath('listJobs'))).jobs;
  }

  /**
   * `POST /v1/jobs/plan`: what running the job file `job` would change (instances to place, replace,
   * adopt and remove per node, each place explained); nothing is done. `job_invalid` names a bad field.
   */
  planJob(job: JobFileBody): Promise<JobPlanAnswer> {
    return this.#call(OPERATOR_ROUTES.planJob, routePath('planJob'), job, { timeoutMs: 0 });
  }

  /** `POST /v1/jobs`: runs the job file `job` (a new version unless it is what runs; chained). */
  runJob(job: JobFileBody): Promise<JobRunAnswer> {
    return this.#call(OPERATOR_ROUTES.runJob, routePath('runJob'), job, { timeoutMs: 0 });
  }

  /** `GET /v1/jobs/<name>`: one job as it stands (`unknown_job` otherwise). */
  async job(name: string): Promise<JobStatusAnswer> {
    return (await this.#call(OPERATOR_ROUTES.getJob, routePath('getJob', name))).job;
  }

  /** `GET /v1/jobs/<name>/history`: the job's versions, oldest first. */
  async jobHistory(name: string): Promise<readonly JobVersionAnswer[]> {
    return (await this.#call(OPERATOR_ROUTES.jobHistory, routePath('jobHistory', name))).versions;
  }

  /** `POST /v1/jobs/<name>/revert`: a new version copying version `version` (chained). */
  revertJob(name: string, version: number): Promise<JobRunAnswer> {
    return this.#call(OPERATOR_ROUTES.revertJob, routePath('revertJob', name), { version });
  }

  /** `POST /v1/jobs/<name>/stop`: stops the job and takes its instances down (chained). */
  async stopJob(name: string): Promise<JobStatusAnswer> {
    return (await this.#call(OPERATOR_ROUTES.stopJob, routePath('stopJob', name), {}, { timeoutMs: 0 })).job;
  }

  /** `GET /v1/whoami`: the operator the controller takes this client for, and its role. */
  whoami(): Promise<WhoAmI> {
    return this.#call(OPERATOR_ROUTES.whoami, routePath('whoami'));
  }

  /** `GET /v1/operators`: every operator (admin). */
  async operators(): Promise<readonly OperatorView[]> {
    return (await this.#call(OPERATOR_ROUTES.listOperators, routePath('listOperators'))).operators;
  }

  /** `POST /v1/operators`: adds an operator (admin); a token operator's token is in the answer, once. */
  addOperator(body: AddOperatorBody): Promise<AddOperatorAnswer> {
    return this.#call(OPERATOR_ROUTES.addOperator, routePath('addOperator'), body);
  }

  /** `DELETE /v1/operators/<name>`: removes an operator (admin); returns it. */
  async removeOperator(name: string): Promise<OperatorView> {
    return (await this.#call(OPERATOR_ROUTES.removeOperator, routePath('removeOperator', name))).operator;
  }

  async #call<B, Q, A>(
    route: RouteDef<B, Q, A>,
    path: string,
    body?: unknown,
    o: { timeoutMs?: number; requestId?: string } = {},
  ): Promise<A> {
    const res = await this.#fetch(route.method, path, body, o);
    return this.#answer(route.answer, res, `${route.method} ${path}`);
  }

  #fetch(
    method: string,
    path: string,
    body: unknown,
    o: { timeoutMs?: number; accept?: string; requestId?: string },
  ): Promise<HttpAnswer> {
    const timeoutMs = o.timeoutMs ?? this.#timeoutMs;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const sent = sendOperatorRequest({
      url: this.#url,
      method,
      path,
      authorization: this.#authorization(method, path, text ?? ''),
      body: text,
      accept: o.accept,
      requestId: o.requestId,
      timeoutMs,
      fingerprint: this.#fingerprint,
    });
    return this.#received(sent, method, path, timeoutMs);
  }

  /** The answer of a request sent, or the `ApiError` its failure means. */
  async #received(
    sent: Promise<HttpAnswer>,
    method: string,
    path: string,
    timeoutMs: number,
  ): Promise<HttpAnswer> {
    try {
      return await sent;
    } catch (err) {
      const failure = err instanceof HttpFailure ? err : undefined;
      if (failure?.code === 'fingerprint_mismatch') {
        throw new ApiError(
          'fingerprint_mismatch',
          `refusing ${this.#url}: its TLS certificate is ${failure.presented ?? '?'}, not the pinned ${this.#fingerprint ?? '?'} (nothing was sent). If the controller's certificate was replaced on purpose, pin the new one with heddle context add --fingerprint; otherwise something else answers at that address`,
          { cause: err },
        );
      }
      const why = failure?.code ?? messageOf(err);
      if (failure?.sent === true && method !== 'GET') {
        // The request reached the controller and no answer came back: it may have acted.
        throw new ApiError(
          'outcome_unknown',
          `the connection to the controller at ${this.#url} broke after ${method} ${path} was sent (${why}): it may have been done`,
          { cause: err },
        );
      }
      if (failure?.timedOut === true) {
        throw new ApiError(
          'timeout',
          `the controller at ${this.#url} did not answer ${method} ${path} in ${timeoutMs} ms`,
          { cause: err },
        );
      }
      throw new ApiError(
        'controller_not_running',
        `the controller at ${this.#url} does not answer (${why}); ${notRunningHint(this.#home)}`,
        { cause: err },
      );
    }
  }

  #authorization(method: string, target: string, body: string): string {
    if (this.#keys === undefined) return `Bearer ${this.#token ?? ''}`;
    const auth = signRequest(this.#keys, {
      method,
      target,
      ts: Date.now(),
      nonce: randomBytes(16).toString('hex'),
      body: Buffer.from(body, 'utf8'),
    });
    return formatSignedAuth(auth);
  }

  async #answer<A>(schema: z.ZodType<A>, res: HttpAnswer, what: string): Promise<A> {
    const text = await res.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(
        'bad_answer',
        `the controller answered ${what} with ${res.status} and no JSON: ${text.slice(0, 200)}`,
        { status: res.status },
      );
    }
    if (res.ok) {
      const r = schema.safeParse(value);
      if (r.success) return r.data;
      const issue = r.error.issues[0];
      const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      const field = pathOf([...(issue?.path ?? []), ...(unknown === undefined ? [] : [unknown])]);
      const why =
        unknown === undefined ? (issue?.message ?? 'invalid') : 'a field the contract does not name';
      throw new ApiError(
        'bad_answer',
        `the controller's answer to ${what} breaks the operator API contract at ${field}: ${why} (is the controller another version than this client?)`,
        { status: res.status, field },
      );
    }
    const e = ApiErrorAnswerSchema.safeParse(value);
    if (!e.success) {
      throw new ApiError(
        'bad_answer',
        `the controller answered ${what} with ${res.status}: ${text.slice(0, 200)}`,
        {
          status: res.status,
        },
      );
    }
    throw errorOf(e.data.error, res.status);
  }
}

function errorOf(e: ApiErrorBody, status: number): ApiError {
  return new ApiError(e.code, e.message, { status, field: e.field, reasons: e.reasons });
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
