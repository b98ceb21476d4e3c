// A test tool (not part of the app): the client load of the controllers' fault trials. Places sent
// through the operator API to several controllers, each order with an idempotency key of its own,
// retried as a real client retries: an answer that failed, or that may not have come (a broken
// connection, a timeout, a controller that is not running, its database down), is asked again with the
// same key of the next controller; `idempotency_in_progress` and `unsettled` are asked again a moment
// later. Every order a controller acknowledged (answered `placed`, with its instance) is recorded.
import type { PlaceOrderInput } from '@heddle/control-plane/contract';
import { type ApiClient, ApiError, type PlaceAnswer } from '@heddle/operator-api';
import { PLACE_PATH, sendOperatorRequest } from '@heddle/operator-api/http';

/** One order of the load: its key and what became of it. */
export interface LoadOrder {
  readonly key: string;
  /** The acknowledged instance (the first `placed` answer), once acknowledged. */
  instanceId?: string;
  /** The controller that acknowledged it (its index), and whether that answer was a replay. */
  ackedBy?: number;
  replayed?: boolean;
  /** Every answer or failure, in order: `<controller index>:<status or code>`. */
  readonly tries: string[];
  /** A definite refusal (the order was not placed, and says why), if one came. */
  refused?: string;
}

/** How the load runs. */
export interface PlaceLoadOptions {
  /** A client of controller `i` (called for each try: a restarted controller listens elsewhere). */
  readonly client: (i: number) => ApiClient;
  /** How many controllers the load spreads over. */
  readonly controllers: number;
  /** The order of key `key` (the key is added). */
  readonly order: (key: string) => PlaceOrderInput;
  /** The keys' prefix. */
  readonly tag: string;
  /** Places in flight at once (default 2). */
  readonly concurrency?: number;
  /** A try that has no answer after this long counts as lost (default 8000 ms). */
  readonly tryTimeoutMs?: number;
  /** How long one order is retried before it is left in doubt (default 20 000 ms). */
  readonly orderDeadlineMs?: number;
}

/** Codes that say the order was not placed, and retrying the same order will not change that. */
const DEFINITE = new Set([
  'unplaceable',
  'invalid_input',
  'idempotency_conflict',
  'duplicate_instance',
  'denied',
]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One place sent to `client`, bounded by `timeoutMs` (the API client's own place waits for ever). */
export function placeWithin(
  client: ApiClient,
  order: PlaceOrderInput,
  timeoutMs: number,
): Promise<PlaceAnswer> {
  const sent = sendOperatorRequest({
    url: client.url,
    method: 'POST',
    path: PLACE_PATH,
    ...client.placeRequest(JSON.stringify(order)),
    timeoutMs,
  });
  return client.placeAnswer(sent);
}

/** A running client load (see the file's comment). */
export class PlaceLoad {
  /** Every order the load made, by key. */
  readonly orders = new Map<string, LoadOrder>();
  readonly #o: PlaceLoadOptions;
  #running = false;
  #next = 0;
  #workers: Promise<void>[] = [];

  constructor(options: PlaceLoadOptions) {
    this.#o = options;
  }

  /** Starts the workers: each places new orders, one after another, until {@link stop}. */
  start(): void {
    this.#running = true;
    for (let w = 0; w < (this.#o.concurrency ?? 2); w++) this.#workers.push(this.#worker());
  }

  /** Stops making new orders and waits for the ones in flight to be answered or left in doubt. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers.splice(0));
  }

  /** The orders acknowledged (`placed`, with an instance). */
  acknowledged(): LoadOrder[] {
    return [...this.orders.values()].filter((o) => o.instanceId !== undefined);
  }

  /** The orders neither acknowledged nor refused: the client does not know what became of them. */
  inDoubt(): LoadOrder[] {
    return [...this.orders.values()].filter((o) => o.instanceId === undefined && o.refused === undefined);
  }

  /**
   * Places (or asks again about) key `key`, starting with controller `first`, until it is acknowledged,
   * refused, or `deadlineMs` passed (then it stays in doubt).
   */
  async placeKey(
    key: string,
    first: number,
    deadlineMs = this.#o.orderDeadlineMs ?? 20_000,
  ): Promise<LoadOrder> {
    const o: LoadOrder = this.orders.get(key) ?? { key, tries: [] };
    this.orders.set(key, o);
    const end = Date.now() + deadlineMs;
    let i = first;
    let pause = 50;
    while (o.instanceId === undefined && o.refused === undefined && Date.now() < end) {
      const at = i % this.#o.controllers;
      try {
        const a = await placeWithin(
          this.#o.client(at),
          { ...this.#o.order(key), idempotency_key: key },
          this.#o.tryTimeoutMs ?? 8_000,
        );
        o.tries.push(`${at}:${a.status}${a.replayed === true ? '(replayed)' : ''}`);
        if (a.status === 'placed' && a.instance !== null) {
          o.instanceId = a.instance.instance_id;
          o.ackedBy = at;
          o.replayed = a.replayed === true;
          break;
        }
        // unsettled: the node's answer was lost; ask again a moment later (any controller answers it).
      } catch (err) {
        const code = err instanceof ApiError ? err.code : 'error';
        o.tries.push(`${at}:${code}`);
        if (DEFINITE.has(code)) {
          o.refused = `${code}: ${err instanceof Error ? err.message : String(err)}`;
          break;
        }
        // Failed or indeterminate (outcome_unknown, controller_not_running, store_unavailable, a
        // timeout) or in progress elsewhere: the same key, on the next controller.
        i++;
      }
      await sleep(pause);
      pause = Math.min(500, pause * 2);
    }
    return o;
  }

  async #worker(): Promise<void> {
    while (this.#running) {
      const n = this.#next++;
      await this.placeKey(`${this.#o.tag}-${n}`, n);
    }
  }
}
