import { type ParsedArgs, parseArgv } from '@heddle/cli-kit';
import { type ApiClient, ApiError } from '@heddle/operator-api';
import { CliError, ExitCode } from './cli-error.js';
import type { OperatorCommandDef } from './command-def.js';
import { connect } from './connect.js';
import { type Paint, paintFor } from './format/colour.js';
import { homeDir } from './home.js';
import type { CliIo } from './io.js';

/** What an operator command's body gets: its parsed arguments, the API client and the output helpers. */
export interface OperatorContext {
  readonly def: OperatorCommandDef;
  /** Its arguments, parsed by its definition (`--home` and `--json` among the flags). */
  readonly parsed: ParsedArgs;
  readonly io: CliIo;
  /** The controller home in use. */
  readonly home: string;
  /** Colour for standard output (identity when not a terminal, with NO_COLOR, or with --json). */
  readonly paint: Paint;
  /**
   * The client of the controller this command talks to (created on first use): the daemon running in
   * {@link OperatorContext.home}, or the one a context or `$HEDDLE_ADDR` names (see `connect`).
   */
  client(): ApiClient;
  /** Prints `value` as one line of JSON with --json, else the human lines. */
  emit(value: unknown, human: () => readonly string[]): void;
  /** The time now (Unix ms). */
  now(): number;
}

/** Exit codes of operator commands by API error code (docs/cli-reference.md, "Exit codes"). */
export function exitCodeOf(code: string): number {
  switch (code) {
    case 'invalid_input':
    case 'bad_json':
    case 'too_large':
    case 'package_invalid':
    case 'unknown_node':
    case 'unknown_instance':
    case 'unknown_alert':
    case 'approval_not_found':
    case 'job_invalid':
    case 'unknown_job':
    case 'unknown_job_version':
    case 'approval_already_decided':
    case 'approval_expired':
    case 'invalid_note':
    case 'unauthorized':
    case 'bad_auth_header':
    case 'unknown_token':
    case 'unknown_key':
    case 'stale_request':
    case 'bad_signature':
    case 'replayed_request':
    case 'forbidden':
    case 'unknown_operator':
    case 'unknown_context':
    case 'idempotency_conflict':
      return ExitCode.badInput;
    case 'node_exists':
    case 'key_mismatch':
    case 'governance':
    case 'unplaceable':
    case 'refused':
    case 'unreachable':
    case 'indeterminate':
    case 'outcome_unknown':
    case 'unsettled':
    case 'duplicate_instance':
    case 'idempotency_in_progress':
    case 'controller_not_running':
    case 'fingerprint_mismatch':
    case 'operator_exists':
    case 'busy':
    case 'timeout':
    case 'approvals_disabled':
      return ExitCode.checkFailed;
    default:
      return ExitCode.internal;
  }
}

const HINTS: Readonly<Record<string, { readonly cmd: string; readonly text: string }>> = {
  unknown_instance: { cmd: 'ps', text: 'see heddle ps for the known instances' },
  unknown_node: { cmd: 'node ls', text: 'see heddle node ls for the known nodes' },
  approval_not_found: { cmd: 'approvals ls', text: 'see heddle approvals ls --all for the known requests' },
  unknown_job: { cmd: 'job status', text: 'see heddle job status for the known jobs' },
  unknown_job_version: { cmd: 'job history', text: 'see heddle job history <name> for its versions' },
  job_invalid: { cmd: 'job plan', text: 'the field is named; docs/jobs.md describes the job file' },
  node_exists: {
    cmd: 'node pin',
    text: 'the message says which node holds that URL: pin its new key with heddle node pin, or remove it with heddle node rm',
  },
  key_mismatch: {
    cmd: 'node pin',
    text: 'if the new key is expected, pin it with heddle node pin <id> --key <hex>',
  },
  unreachable: {
    cmd: 'node ls',
    text: 'check that the node runs, listens where the URL says, and lists this controller’s key; then try again',
  },
  indeterminate: {
    cmd: 'ps',
    text: 'the controller settles it with the node; check heddle ps before trying again',
  },
  outcome_unknown: {
    cmd: 'ps',
    text: 'check heddle ps before trying again (a place retried with the same --idempotency-key never places twice)',
  },
  governance: { cmd: 'policy check', text: 'see why with heddle policy check' },
  unplaceable: {
    cmd: '--explain',
    text: 'every node’s reason follows; heddle place --dry-run --explain shows the whole decision',
  },
  package_invalid: { cmd: 'pkg verify', text: 'check the package with heddle pkg verify <dir>' },
  timeout: { cmd: 'ps', text: 'the controller may still be working; check heddle ps before trying again' },
  forbidden: {
    cmd: 'operator ls',
    text: 'an admin can give this operator another role (heddle operator ls shows them)',
  },
  unknown_key: {
    cmd: 'operator add',
    text: 'an admin adds the key with heddle operator add <name> --key <file.pub|hex> --role <role>',
  },
  unknown_token: {
    cmd: 'operator add',
    text: 'check the token file, or ask an admin for a token (heddle operator add <name> --token --role <role>)',
  },
};

/** `message` with what to do next, unless it already says so. */
export function withHint(code: string, message: string): string {
  const h = HINTS[code];
  if (h === undefined || message.includes(`heddle ${h.cmd}`)) return message;
  if (message.includes(`(see ${h.cmd})`)) return message.replace(`(see ${h.cmd})`, `(see heddle ${h.cmd})`);
  return `${message}; ${h.text}`;
}

/** An error as printed: code, message (with its hint), field and per-node reasons. */
export interface PrintedError {
  readonly code: string;
  readonly message: string;
  readonly field?: string;
  readonly reasons?: Readonly<Record<string, string>>;
  /** More fields of the JSON form (a usage error's `reason` and `token`). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Prints an error on standard error: `{"error":{...}}` with --json, else one line and any reasons. */
export function printError(io: CliIo, command: string, json: boolean, e: PrintedError): void {
  if (json) {
    const { details, ...error } = e;
    io.err(JSON.stringify({ error: { ...error, ...details } }));
    return;
  }
  io.err(`heddle ${command}: ${e.message}`);
  for (const [node, reason] of Object.entries(e.reasons ?? {})) io.err(`  ${node}: ${reason}`);
}

function printable(err: unknown): { error: PrintedError; exit: number } | undefined {
  if (err instanceof ApiError) {
    const reasons = Object.keys(err.reasons).length > 0 ? { reasons: err.reasons } : {};
    return {
      error: {
        code: err.code,
        message: withHint(err.code, err.message),
        ...(err.field === undefined ? {} : { field: err.field }),
        ...reasons,
      },
      exit: exitCodeOf(err.code),
    };
  }
  if (err instanceof CliError) {
    return {
      error: {
        code: err.code,
        message: err.message,
        ...(err.field === undefined ? {} : { field: err.field }),
        ...(err.details === undefined ? {} : { details: err.details }),
      },
      exit: err.exitCode,
    };
  }
  return undefined;
}

/**
 * Runs an operator command: parses `args` by `def` (its `--help` is answered by the dispatcher, from
 * the same definition), resolves the home, and runs `body`. Usage, input
 * and API errors are printed here (with per-node reasons and what to do next) and mapped to exit
 * codes; anything else propagates to the CLI's internal-error handler.
 */
export async function runOperator(
  def: OperatorCommandDef,
  args: readonly string[],
  io: CliIo,
  body: (ctx: OperatorContext) => Promise<number>,
): Promise<number> {
  const json = args.includes('--json');
  try {
    const parsed = parseArgv('heddle', def, args);
    const asJson = parsed.booleans.json === true;
    const home = homeDir(parsed.strings.home, io, io.env ?? process.env);
    let client: ApiClient | undefined;
    const ctx: OperatorContext = {
      def,
      parsed,
      io,
      home,
      paint: paintFor(io, asJson),
      client: () => {
        client ??= connect(parsed.strings.home, io, io.env ?? process.env);
        return client;
      },
      emit: (value, human) => {
        if (asJson) io.out(JSON.stringify(value));
        else for (const line of human()) io.out(line);
      },
      now: () => Date.now(),
    };
    return await body(ctx);
  } catch (err) {
    const p = printable(err);
    if (p === undefined) throw err;
    printError(io, def.name, json, p.error);
    return p.exit;
  }
}
