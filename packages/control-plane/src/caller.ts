import { fromHex, type JsonValue, type KeyPair, nodeIdFromPublicKey } from '@heddle/envelope';
import {
  CallFailure,
  type CtlBody,
  type CtlMethod,
  createRequest,
  lostCallKind,
  type MethodAnswer,
  type MethodBodyInput,
  mutates,
  ProtocolError,
  parseAnswer,
  signRequest,
} from '@heddle/protocol';
import { type CallResult, type PackageSource, type WireClientOptions, WireSessionPool } from '@heddle/wire';
import type { PlaneConfig } from './config.js';

/** One signed call to a node: `method` with a body built to its schema (`@heddle/protocol`). */
export interface CallSpec<M extends CtlMethod = CtlMethod> {
  /** Where the node listens. */
  readonly url: string;
  /** The node id the request is addressed to (`*` for a describe of a node not yet known). */
  readonly target: string;
  readonly method: M;
  /** The method's body (default `{}`). */
  readonly body?: MethodBodyInput<M>;
  /** Required for mutating methods: the chain hash of the controller's decision. */
  readonly decisionId?: string;
  /** The node's key (64 hex), when known: an answer signed by any other key is not accepted. */
  readonly expectedKey?: string;
  /** The package the node may fetch during this call. */
  readonly source?: PackageSource;
  /** Overrides the method's default timeout. */
  readonly timeoutMs?: number;
  /**
   * A health check: connecting and the answer are each bounded by the config's `healthTimeoutMs`
   * (unless `timeoutMs` says otherwise for the answer).
   */
  readonly health?: boolean;
}

/**
 * Makes signed round trips for a controller: builds and signs each request with the controller's key
 * (lifetime `requestTtlMs`), sends it over the node's kept session (one per URL, at most
 * `maxHostSessions`, closed after `hostSessionIdleMs` unused; see `WireSessionPool`), and returns the
 * verified answer. Failures are the wire's `CallFailure`s, classed `refused`, `unreachable` or
 * `indeterminate` (docs/protocol.md, section 11). `place` and `load` get `placeTimeoutMs`, everything else
 * `callTimeoutMs`.
 */
export class Caller {
  readonly #keys: KeyPair;
  readonly #requester: string;
  readonly #config: PlaneConfig;
  readonly #pool: WireSessionPool;
  readonly #now: () => number;
  /** When a request was last issued to each target (node id) and URL (Unix ms, this clock). */
  readonly #issued = new Map<string, number>();

  constructor(keys: KeyPair, config: PlaneConfig, options: WireClientOptions & { now?: () => number } = {}) {
    this.#keys = keys;
    this.#requester = nodeIdFromPublicKey(keys.publicKey);
    this.#config = config;
    const { now, ...client } = options;
    this.#pool = new WireSessionPool({
      ...client,
      maxSessions: config.maxHostSessions,
      idleMs: config.hostSessionIdleMs,
    });
    this.#now = now ?? Date.now;
  }

  /**
   * Sends one signed call; resolves with the verified `ok` answer, its `result` parsed with the
   * method's answer schema, or rejects with a `CallFailure`. An answer that does not fit its schema is
   * a `CallFailure` of the lost kind (`indeterminate` for a mutating method: the host said it acted,
   * but not in a form that can be read; `unreachable` otherwise), its `field` the offending
   * `result.<path>` and its cause a `ProtocolError` `invalid_answer`.
   */
  async call<M extends CtlMethod>(spec: CallSpec<M>): Promise<AnsweredCall<M>> {
    const now = this.#now();
    // cast: a method body built to its schema's input type holds only JSON values (strings, numbers,
    // booleans, null, arrays, plain objects); createRequest checks it is an object, signing canonicalises it.
    const body = (spec.body ?? {}) as CtlBody;
    const signed = signRequest(
      createRequest({
        method: spec.method,
        requester: this.#requester,
        target: spec.target,
        body,
        now,
        ttlMs: this.#config.requestTtlMs,
        ...(spec.decisionId === undefined ? {} : { decisionId: spec.decisionId }),
      }),
      this.#keys,
    );
    const slow = spec.method === 'workload.place' || spec.method === 'workload.load';
    const health = spec.health === true;
    const timeoutMs =
      spec.timeoutMs ??
      (health
        ? this.#config.healthTimeoutMs
        : slow
          ? this.#config.placeTimeoutMs
          : this.#config.callTimeoutMs);
    // One kept session per node (`WireSessionPool`), each request signed on its own. The request is
    // sent only once its host's process answered the connection: from then on it may act on it (and
    // renew its lease up to `now`).
    const r = await this.#pool.call(
      spec.url,
      signed,
      {
        timeoutMs,
        ...(health ? { connectTimeoutMs: this.#config.healthTimeoutMs } : {}),
        ...(spec.expectedKey === undefined ? {} : { expectedPublicKey: fromHex(spec.expectedKey) }),
        ...(spec.source === undefined ? {} : { source: spec.source }),
        now: this.#now,
      },
      () => {
        for (const k of [spec.target, spec.url]) this.#issued.set(k, Math.max(now, this.#issued.get(k) ?? 0));
      },
    );
    try {
      return { ...r, result: parseAnswer(spec.method, r.result, body) };
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      throw new CallFailure(lostCallKind(spec.method, true), `invalid answer: ${err.message}`, {
        cause: err,
        ...(err.field === undefined ? {} : { field: err.field }),
      });
    }
  }

  /**
   * The issue time of the last request this process sent to node `nodeId` or URL `url` over an open
   * connection (a request that may reach it and, on a host with a lease, renew it up to that time),
   * or undefined.
   */
  lastIssuedTo(nodeId: string, url: string): number | undefined {
    const a = this.#issued.get(nodeId);
    const b = this.#issued.get(url);
    return a === undefined ? b : b === undefined ? a : Math.max(a, b);
  }

  /** Closes the kept sessions (their open calls fail as lost); later calls are not sent. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  /** Connections opened so far (kept and one-off). */
  get connects(): number {
    return this.#pool.connects;
  }

  /** True when `method` changes state on the node (its lost answers are indeterminate). */
  static mutates(method: string): boolean {
    return mutates(method);
  }
}

/** A verified `ok` answer to `M`, its `result` parsed with the method's answer schema. */
export interface AnsweredCall<M extends CtlMethod> extends Omit<CallResult, 'result'> {
  /** The method's answer. */
  readonly result: MethodAnswer<M>;
}

/** Progress of a package transfer: bytes served so far of `total`. */
export interface TransferProgress {
  readonly node_id: string;
  readonly bytes: number;
  readonly total: number;
}

/**
 * Wraps a source so that every piece served is counted and reported (for a progress bar); `total` is
 * the sum of the envelope's file sizes.
 */
export function countingSource(
  source: PackageSource,
  total: number,
  report: (bytes: number, total: number) => void,
): PackageSource {
  let bytes = 0;
  return {
    manifestHash: source.manifestHash,
    manifest: () => source.manifest(),
    pieceMap: (path) => source.pieceMap(path),
    piece: async (path, index) => {
      const piece = await source.piece(path, index);
      bytes += piece.length;
      report(bytes, total);
      return piece;
    },
  };
}

/** A JSON value as an object (an answer's `result`), or an empty object. */
export function asObject(value: JsonValue): { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
}
