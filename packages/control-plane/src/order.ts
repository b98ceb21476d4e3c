import { randomBytes } from 'node:crypto';
import { RunModeSchema } from '@heddle/model';
import { ConfigValuesSchema } from '@heddle/protocol';
import { z } from 'zod';
import { PlaneError } from './errors.js';
import type { LabelConstraint, OrderPackageFacts, OrderRecord, OrderStorePin } from './state-store.js';

/** A node label's name: 1..63 of `a-z 0-9 . _ -`, starting with a letter or digit. */
export const LabelName: z.ZodString = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/,
    'expected a label name: 1..63 of a-z 0-9 . _ - (starting with a-z or 0-9)',
  );
/** A node label's value: 0..255 printable characters without spaces, `=` or `,`. */
export const LabelValue: z.ZodString = z
  .string()
  .regex(
    /^[\x21-\x2b\x2d-\x3c\x3e-\x7e]{0,255}$/,
    'expected a label value: at most 255 printable ASCII characters without space, = or ,',
  );

const NodeId = z.string().regex(/^[0-9a-f]{32}$/, 'expected a node id (32 lower-case hex characters)');

/** What an operator asks to place (the operator API's `POST /v1/place` body). */
export interface PlaceOrderInput {
  /** A package directory on the controller's machine (verified and copied into its store). */
  readonly package_dir?: string | undefined;
  /** Or a package the controller already holds. */
  readonly manifest_hash?: string | undefined;
  /** Place on this node only. */
  readonly node?: string | undefined;
  /** Node ids to prefer and to avoid. */
  readonly prefer?: readonly string[] | undefined;
  readonly avoid?: readonly string[] | undefined;
  /** Run mode (default `{"type":"once"}`). */
  readonly mode?: OrderRecord['mode'] | undefined;
  /** Config values. */
  readonly values?: Readonly<Record<string, string | number | boolean | null>> | undefined;
  /** Start after placing (default true). */
  readonly start?: boolean | undefined;
  /** Emulated variants may be chosen (default false). */
  readonly allow_emulated?: boolean | undefined;
  /**
   * Whether a lost instance may be placed again elsewhere (default true). Say false for a workload tied
   * to its node (a sensor or device there): its node's death then raises an alert instead.
   */
  readonly migratable?: boolean | undefined;
  /** Decide and explain, chain nothing, place nothing. */
  readonly dry_run?: boolean | undefined;
  /** Or a Cognitum Seed store cog the operator pins (placed only on Seeds). */
  readonly store_pin?: OrderStorePin | undefined;
  /** Node labels a node must carry to take it, each with exactly its value (`label.room=kitchen`). */
  readonly constraints?: readonly LabelConstraint[] | undefined;
  /** Spread the workload's instances over the values of this node label (`room`). */
  readonly spread?: string | undefined;
  /**
   * A key the client chose for this place (1..128 of `A-Z a-z 0-9 . _ : -`): a retry with the same
   * key answers with the order it made and never makes a second (see `withIdempotencyKey`).
   */
  readonly idempotency_key?: string | undefined;
}

/** Schema of {@link PlaceOrderInput}: exactly one of `package_dir` and `manifest_hash`. */
export const PlaceOrderInputSchema: z.ZodType<PlaceOrderInput> = z
  .strictObject({
    package_dir: z.string().min(1).max(4096).optional(),
    manifest_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
      .optional(),
    node: NodeId.optional(),
    prefer: z.array(NodeId).max(64).optional(),
    avoid: z.array(NodeId).max(64).optional(),
    // The run mode and config values as the host's place body takes them (@heddle/protocol): an order
    // the host would refuse is refused here, at the operator's boundary, naming the field.
    mode: RunModeSchema.optional(),
    values: ConfigValuesSchema.optional(),
    start: z.boolean().optional(),
    allow_emulated: z.boolean().optional(),
    migratable: z.boolean().optional(),
    dry_run: z.boolean().optional(),
    store_pin: z
      .strictObject({
        id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a cog id'),
        version: z.string().regex(/^[0-9A-Za-z.+-]{1,64}$/, 'expected a version'),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
          .optional(),
        console_commands: z.array(z.string().min(1).max(128)).max(64).default([]),
      })
      .optional(),
    constraints: z
      .array(
        z.strictObject({
          label: LabelName,
          value: LabelValue,
        }),
      )
      .max(64, 'at most 64 constraints')
      .optional(),
    spread: LabelName.optional(),
    idempotency_key: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'expected 1..128 characters of A-Z a-z 0-9 . _ : -')
      .optional(),
  })
  .refine((o) => [o.package_dir, o.manifest_hash, o.store_pin].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of package_dir, manifest_hash and store_pin',
    path: ['package_dir'],
  });

/** Parses an order; refuses with `invalid_input` naming the field. */
export function parseOrder(input: unknown): PlaceOrderInput {
  const r = PlaceOrderInputSchema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  // An unknown key is reported at its object's path; name the key itself.
  const path =
    issue === undefined
      ? []
      : issue.code === 'unrecognized_keys'
        ? [...issue.path, issue.keys[0] ?? '']
        : issue.path;
  const field = path.length === 0 ? '$' : path.join('.');
  throw new PlaneError('invalid_input', `order ${field}: ${issue?.message ?? 'invalid'}`, { field });
}

/** A new order id: `o-` and 16 hex. */
export function newOrderId(): string {
  return `o-${randomBytes(8).toString('hex')}`;
}

/** The order record of `input` for the package `workload`@`version` (a new order id unless `orderId`; `packageFacts`: what a placement of it records of its package). */
export function orderRecord(
  input: PlaceOrderInput,
  pkg: {
    readonly workload: string;
    readonly version: string;
    readonly manifest_hash: string;
    readonly package_id: string;
  },
  now: number,
  orderId: string = newOrderId(),
  packageFacts?: OrderPackageFacts,
): OrderRecord {
  return {
    order_id: orderId,
    workload: pkg.workload,
    version: pkg.version,
    manifest_hash: pkg.manifest_hash,
    package_id: pkg.package_id,
    mode: input.mode ?? { type: 'once' },
    values: input.values ?? {},
    start: input.start ?? true,
    node: input.node ?? null,
    prefer: [...(input.prefer ?? [])],
    avoid: [...(input.avoid ?? [])],
    allow_emulated: input.allow_emulated ?? false,
    migratable: input.migratable ?? true,
    created_at_ms: now,
    ...(input.store_pin === undefined ? {} : { store_pin: input.store_pin }),
    ...(input.constraints === undefined || input.constraints.length === 0
      ? {}
      : { constraints: input.constraints.map((c) => ({ label: c.label, value: c.value })) }),
    ...(input.spread === undefined ? {} : { spread: input.spread }),
    ...(packageFacts === undefined ? {} : { package_facts: packageFacts }),
  };
}
