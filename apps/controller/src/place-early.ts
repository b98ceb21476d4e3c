import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgv } from '@heddle/cli-kit';
import type { PlaceOrderInput } from '@heddle/control-plane/contract';
import {
  API_INFO_FILE,
  API_TOKEN_FILE,
  type HttpAnswer,
  NDJSON,
  PLACE_PATH,
  sendOperatorRequest,
} from '@heddle/operator-api/http';
import { orderOf } from './commands/place-order.js';
import { PLACE } from './defs/instances.js';
import { ADDR_ENV, CONTEXT_ENV, HOME_ENV, homeDir } from './home.js';
import type { CliIo } from './io.js';

/** A `heddle place` order sent before the rest of the command was loaded (see {@link placeEarly}). */
export interface EarlyPlace {
  /** The order sent (the command uses it instead of building another). */
  readonly order: PlaceOrderInput;
  /** The request id sent. */
  readonly requestId: string;
  /** The answer, as `sendOperatorRequest` gives it (read it with `ApiClient.placeAnswer`). */
  readonly sent: Promise<HttpAnswer>;
}

/** The idempotency key the order builder makes up (the only key an early order carries). */
const MADE_UP_KEY = /^cli-[0-9a-f]{24}$/;

const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * `heddle place`, first part: when the order can be sent with nothing but the argument parser and
 * node:http, sends it now, so that the daemon works while the CLI loads its validating client
 * (`ApiClient`, zod, the output code); the command then reads the answer with
 * `ApiClient.placeAnswer`, so outputs and errors are those of the command without it. Returns
 * undefined (nothing sent) whenever anything is unusual, and the command then does everything itself:
 * arguments that do not parse or build an order, `--wait`, `--idempotency-key`, `--request-id`,
 * `--constraint`, `--spread`, a controller chosen by `$HEDDLE_ADDR`, `$HEDDLE_CONTEXT` or a context
 * (only `--home` and `$HEDDLE_HOME` are sent early), an `api.json` that is not exactly a running
 * daemon's, or an unreadable token.
 */
export function placeEarly(args: readonly string[], io: CliIo): EarlyPlace | undefined {
  try {
    const env = io.env ?? process.env;
    const parsed = parseArgv('heddle', PLACE, args);
    const { strings, booleans, lists } = parsed;
    if (
      booleans.wait === true ||
      set(strings['idempotency-key']) ||
      strings['request-id'] !== undefined ||
      (lists.constraint ?? []).length > 0 ||
      strings.spread !== undefined
    ) {
      return undefined;
    }
    let home: string;
    if (set(strings.home)) home = homeDir(strings.home, io, env);
    else if (!set(env[ADDR_ENV]) && !set(env[CONTEXT_ENV]) && set(env[HOME_ENV]))
      home = homeDir(undefined, io, env);
    else return undefined;
    const url = daemonUrl(readFileSync(join(home, API_INFO_FILE), 'utf8'));
    if (url === undefined) return undefined;
    const tokenText = readFileSync(join(home, API_TOKEN_FILE), 'utf8');
    if (Buffer.byteLength(tokenText) > 4096) return undefined;
    const order = orderOf(
      { parsed, io },
      {
        parseConstraint: () => {
          throw new Error('not in an early order');
        },
        parseSpread: () => {
          throw new Error('not in an early order');
        },
        keyPattern: MADE_UP_KEY,
      },
    );
    const requestId = randomUUID();
    const body = JSON.stringify(order);
    // With a progress bar (not --json, not a dry run) the command reads the NDJSON stream.
    const streamed = booleans.json !== true && order.dry_run !== true;
    const sent = sendOperatorRequest({
      url,
      method: 'POST',
      path: PLACE_PATH,
      authorization: `Bearer ${tokenText.trim()}`,
      body,
      ...(streamed ? { accept: NDJSON } : {}),
      requestId,
      timeoutMs: 0,
      fingerprint: undefined,
    });
    sent.catch(() => {}); // read (and reported) by the command once it is loaded
    return { order, requestId, sent };
  } catch {
    return undefined;
  }
}

/**
 * The `url` of a running daemon's `api.json` text, when the text is exactly what `ApiClient.fromHome`
 * accepts (its `ApiInfoSchema`; a test keeps the two in step), else undefined: a file the client
 * would refuse is never used to send.
 */
export function daemonUrl(text: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  // cast: a JSON object; every field is checked below before use
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['url', 'pid', 'node_id', 'remote'].includes(k)) return undefined;
  const { url, pid, node_id: nodeId, remote } = o;
  if (typeof url !== 'string' || !/^http:\/\/127\.0\.0\.1:\d{1,5}$/.test(url)) return undefined;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (typeof nodeId !== 'string' || !/^[0-9a-f]{32}$/.test(nodeId)) return undefined;
  if (remote !== undefined) {
    if (typeof remote !== 'object' || remote === null || Array.isArray(remote)) return undefined;
    // cast: a JSON object; every field is checked below
    const r = remote as Record<string, unknown>;
    if (Object.keys(r).some((k) => k !== 'url' && k !== 'fingerprint')) return undefined;
    if (typeof r.url !== 'string' || !/^https:\/\/[^/\s]{1,300}$/.test(r.url)) return undefined;
    if (typeof r.fingerprint !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(r.fingerprint)) return undefined;
  }
  return url;
}
