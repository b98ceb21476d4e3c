import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { positional } from '@heddle/cli-kit';
import type { PlaceOrderInput } from '@heddle/control-plane/contract';
import { badValue } from '../command-def.js';
import type { OperatorContext } from '../operator.js';

// Building the order of `heddle place` from its arguments. Kept free of the validating client and of
// zod (types only), so that the early send (place-early.ts) builds the very same order before the
// rest of the command is loaded.

type Mode = NonNullable<PlaceOrderInput['mode']>;
type ConfigValue = string | number | boolean | null;

/** Parses `--mode`: `once`, `listener` or `interval:N` (N seconds, 1..86400); refused naming `mode`. */
export function parseMode(text: string): Mode {
  if (text === 'once' || text === 'listener') return { type: text };
  const m = /^interval:(\d{1,5})$/.exec(text);
  const secs = m === null ? Number.NaN : Number(m[1]);
  if (!Number.isInteger(secs) || secs < 1 || secs > 86_400) {
    throw badValue(
      'mode',
      `--mode: ${JSON.stringify(text)} is not once, listener or interval:N with N seconds in 1..86400`,
    );
  }
  return { type: 'interval', secs };
}

const CONFIG_KEY = /^[a-z][a-z0-9_]{0,63}$/;
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** Types one `--set` value: `true`, `false`, `null`, a JSON number, a JSON string in quotes, else the text. */
export function configValue(key: string, text: string): ConfigValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (JSON_NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  if (text.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === 'string') return v;
    } catch {
      // refused below
    }
    throw badValue(`values.${key}`, `--set ${key}: ${text} starts with a quote but is not a JSON string`);
  }
  if (text.length > 4096) throw badValue(`values.${key}`, `--set ${key}: longer than 4096 characters`);
  return text;
}

/** Parses every `--set key=value` strictly: a key is a config field name, given once. */
export function parseSets(sets: readonly string[]): Record<string, ConfigValue> {
  const values: Record<string, ConfigValue> = {};
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq < 0) throw badValue('set', `--set: ${JSON.stringify(s)} is not key=value`);
    const key = s.slice(0, eq);
    if (!CONFIG_KEY.test(key)) {
      throw badValue(
        `values.${key}`,
        `--set: ${JSON.stringify(key)} is not a config field name (a lower-case letter, then letters, digits and _)`,
      );
    }
    if (Object.hasOwn(values, key)) throw badValue(`values.${key}`, `--set: ${key} is given twice`);
    values[key] = configValue(key, s.slice(eq + 1));
  }
  return values;
}

const NODE_ID = /^[0-9a-f]{32}$/;

function nodeIds(flag: string, ids: readonly string[]): string[] {
  for (const id of ids) {
    if (!NODE_ID.test(id)) {
      throw badValue(
        flag,
        `--${flag}: ${JSON.stringify(id)} is not a node id (32 lower-case hex; see heddle node ls)`,
      );
    }
  }
  return [...ids];
}

/**
 * What building an order needs beyond the arguments: the label parsers of `--constraint` and
 * `--spread` and the idempotency key pattern, which live in the control plane's contract (zod). `heddle
 * place` passes the real ones; the early send (place-early.ts) never builds an order with those
 * flags or a given key, so it need not load them.
 */
export interface OrderDeps {
  readonly parseConstraint: (text: string) => NonNullable<PlaceOrderInput['constraints']>[number];
  readonly parseSpread: (text: string) => NonNullable<PlaceOrderInput['spread']>;
  readonly keyPattern: RegExp;
}

/** The order `heddle place` sends, from its parsed arguments. */
export function orderOf(ctx: Pick<OperatorContext, 'parsed' | 'io'>, deps: OrderDeps): PlaceOrderInput {
  const { strings, booleans, lists } = ctx.parsed;
  const node = strings.node === undefined ? undefined : nodeIds('node', [strings.node])[0];
  const prefer = nodeIds('prefer', lists.prefer ?? []);
  const avoid = nodeIds('avoid', lists.avoid ?? []);
  const values = parseSets(lists.set ?? []);
  const target = positional(ctx.parsed, 0);
  const store = /^store:([a-z0-9][a-z0-9._-]{0,63})@([0-9A-Za-z.+-]{1,64})$/.exec(target);
  if (target.startsWith('store:') && store === null) {
    throw badValue('package-dir', `${JSON.stringify(target)}: expected store:<id>@<version>`);
  }
  const key = strings['idempotency-key'] ?? `cli-${randomBytes(12).toString('hex')}`;
  if (!deps.keyPattern.test(key))
    throw badValue('idempotency_key', '--idempotency-key: expected 1..128 characters of A-Z a-z 0-9 . _ : -');
  const sha256 = strings.sha256;
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256))
    throw badValue('sha256', 'expected 64 lower-case hex characters');
  return {
    ...(store === null
      ? { package_dir: resolve(ctx.io.cwd, target) }
      : {
          store_pin: {
            // cast: the store-pin pattern's two groups always take part in a match
            id: store[1] as string,
            version: store[2] as string,
            ...(sha256 === undefined ? {} : { sha256 }),
            console_commands: [...(lists.console ?? [])],
          },
        }),
    ...(node === undefined ? {} : { node }),
    ...(prefer.length === 0 ? {} : { prefer }),
    ...(avoid.length === 0 ? {} : { avoid }),
    ...(strings.mode === undefined ? {} : { mode: parseMode(strings.mode) }),
    ...(Object.keys(values).length === 0 ? {} : { values }),
    ...(booleans['no-start'] === true ? { start: false } : {}),
    ...(booleans['allow-emulated'] === true ? { allow_emulated: true } : {}),
    ...(booleans['no-migrate'] === true ? { migratable: false } : {}),
    ...((lists.constraint ?? []).length === 0
      ? {}
      : { constraints: (lists.constraint ?? []).map(deps.parseConstraint) }),
    ...(strings.spread === undefined ? {} : { spread: deps.parseSpread(strings.spread) }),
    ...(booleans['dry-run'] === true ? { dry_run: true } : { idempotency_key: key }),
  };
}
