import { join } from 'node:path';
import { errnoCode, errorMessage, parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { type GateContext, GateContextSchema } from '@heddle/gate';
import { z } from 'zod';
import { HELD_PLACE_STATUSES, type HeldPlaceStatus } from './approval-view.js';
import { PlaneError } from './errors.js';
import { type PlaceOrderInput, PlaceOrderInputSchema } from './order.js';

/** A place held for an approval, as kept on disk (see {@link HeldPlaces}). */
export interface HeldPlaceRecord {
  /** The approval request holding it. */
  readonly approval_id: string;
  /** The order as the operator gave it, its package named by `manifest_hash` (held by the controller). */
  readonly order: PlaceOrderInput;
  /** The order id an idempotency key reserved for it, if any. */
  readonly reserved_order_id: string | null;
  readonly workload: string;
  readonly version: string;
  readonly manifest_hash: string;
  /** The node and variant the engine chose when it deferred. */
  readonly node_id: string;
  readonly variant: string;
  /** The gate check that deferred (the approval covers exactly this action and context). */
  readonly action: string;
  readonly context: GateContext;
  readonly status: HeldPlaceStatus;
  readonly order_id: string | null;
  readonly instance_id: string | null;
  readonly detail: string | null;
}

const HeldSchema: z.ZodType<HeldPlaceRecord> = z.strictObject({
  approval_id: z.string().regex(/^[0-9a-f]{8,64}$/),
  order: PlaceOrderInputSchema,
  reserved_order_id: z.string().nullable(),
  workload: z.string().min(1),
  version: z.string().min(1),
  manifest_hash: z.string().regex(/^[0-9a-f]{64}$/),
  node_id: z.string().min(1),
  variant: z.string().min(1),
  action: z.string().min(1),
  context: GateContextSchema,
  status: z.enum(HELD_PLACE_STATUSES),
  order_id: z.string().nullable(),
  instance_id: z.string().nullable(),
  detail: z.string().nullable(),
});

const FileSchema = z.strictObject({
  version: z.literal(1),
  held: z.array(HeldSchema).max(100_000),
});

/** The file name of the held places in the controller's state directory. */
export const HELD_PLACES_FILE = 'held-places.json';

const MAX_BYTES = 64 * 1024 * 1024;

/**
 * The places held for approvals, in one JSON file of the controller's state directory
 * (`held-places.json`, mode 0600), rewritten crash-safely (temporary file, fsync, rename) on every
 * change: a crash leaves the old or the new content. A missing file holds nothing; a corrupt one is
 * refused with `state` naming it.
 */
export class HeldPlaces {
  /** The file. */
  readonly path: string;
  #cache: Map<string, HeldPlaceRecord> | undefined;

  constructor(stateDir: string) {
    this.path = join(stateDir, HELD_PLACES_FILE);
  }

  /** The held place of approval `id`, if any. */
  get(id: string): HeldPlaceRecord | undefined {
    return this.#all().get(id);
  }

  /** Inserts or replaces a held place (durable when it returns). */
  put(record: HeldPlaceRecord): void {
    const all = new Map(this.#all());
    all.set(record.approval_id, record);
    const body = { version: 1, held: [...all.values()] };
    writeFileAtomic(this.path, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    this.#cache = all;
  }

  /** Every held place. */
  list(): HeldPlaceRecord[] {
    return [...this.#all().values()];
  }

  #all(): Map<string, HeldPlaceRecord> {
    if (this.#cache !== undefined) return this.#cache;
    let text: string;
    try {
      text = readTextBounded(this.path, MAX_BYTES);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') {
        this.#cache = new Map();
        return this.#cache;
      }
      throw new PlaneError('state', `cannot read ${this.path}: ${errorMessage(err)}`, { cause: err });
    }
    let parsed: z.infer<typeof FileSchema>;
    try {
      parsed = FileSchema.parse(parseJson(text, { integersOnly: false, maxBytes: MAX_BYTES }));
    } catch (err) {
      throw new PlaneError('state', `${this.path} is corrupt: ${errorMessage(err)}`, { cause: err });
    }
    this.#cache = new Map(parsed.held.map((h) => [h.approval_id, h]));
    return this.#cache;
  }
}
