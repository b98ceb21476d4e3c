import {
  type CtlMethod,
  createRequest,
  fromHex,
  type JsonObject,
  type JsonValue,
  type KeyPair,
  mutates,
  nodeIdFromPublicKey,
  signRequest,
} from '@heddle/envelope';
import { type CallResult, type PackageSource, WireClient, type WireClientOptions } from '@heddle/wire';
import type { PlaneConfig } from './config.js';

/** One signed call to a node. */
export interface CallSpec {
  /** Where the node listens. */
  readonly url: string;
  /** The node id the request is addressed to (`*` for a describe of a node not yet known). */
  readonly target: string;
  readonly method: CtlMethod;
  readonly body?: JsonObject;
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
 * (lifetime `requestTtlMs`), sends it over one connection per call (`WireClient`), and returns the
 * verified answer. Failures are the wire's `CallFailure`s, classed `refused`, `unreachable` or
 * `indeterminate` (DESIGN 4). `place` and `load` get `placeTimeoutMs`, everything else
 * `callTimeoutMs`.
 */
export class Caller {
  readonly #keys: KeyPair;
  readonly #requester: string;
  readonly #config: PlaneConfig;
  readonly #client: WireClient;
  /** The client of health checks: its connection is bounded by `healthTimeoutMs`. */
  readonly #healthClient: WireClient;
  readonly #now: () => number;

  constructor(keys: KeyPair, config: PlaneConfig, options: WireClientOptions & { now?: () => number } = {}) {
    this.#keys = keys;
    this.#requester = nodeIdFromPublicKey(keys.publicKey);
    this.#config = config;
    const { now, ...client } = options;
    this.#client = new WireClient(client);
    this.#healthClient = new WireClient({ ...client, connectTimeoutMs: config.healthTimeoutMs });
    this.#now = now ?? Date.now;
  }

  /** Sends one signed call; resolves with the verified `ok` answer or rejects with a `CallFailure`. */
  call(spec: CallSpec): Promise<CallResult> {
    const now = this.#now();
    const signed = signRequest(
      createRequest({
        method: spec.method,
        requester: this.#requester,
        target: spec.target,
        body: spec.body ?? {},
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
    return (health ? this.#healthClient : this.#client).call(spec.url, signed, {
      timeoutMs,
      ...(spec.expectedKey === undefined ? {} : { expectedPublicKey: fromHex(spec.expectedKey) }),
      ...(spec.source === undefined ? {} : { source: spec.source }),
      now: this.#now,
    });
  }

  /** True when `method` changes state on the node (its lost answers are indeterminate). */
  static mutates(method: string): boolean {
    return mutates(method);
  }
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
