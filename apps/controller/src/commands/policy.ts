import { resolve } from 'node:path';
import { errorMessage, type ParsedArgs, parseArgv, positional, requiredString } from '@heddle/cli-kit';
import { HeddleError, parseJson, readTextBounded } from '@heddle/envelope';
import {
  compilePolicy,
  type Decision,
  evaluate,
  explain,
  type GateContext,
  loadPolicyFile,
  type Policy,
  parseContext,
  RevocationSet,
  type RuleTrace,
  ValidationError,
} from '@heddle/gate';
import type { RevocationCheck } from '@heddle/model';
import { loadTrustFile, RevocationList } from '@heddle/package';
import { CliError, ExitCode, usageError } from '../cli-error.js';
import { CONTEXT_FLAGS, POLICY_CHECK, POLICY_VALIDATE } from '../defs/policy.js';
import { type CliIo, emit } from '../io.js';

const USAGE = 'usage: heddle policy <check|validate> ... (heddle policy --help lists them)';

/**
 * `heddle policy check ...` dry-runs one gate decision (nothing is chained or queued) and prints the
 * verdict and the deciding rule; exit code 0 for permit, 1 for deny or defer. `heddle policy validate
 * <file>` validates a policy file and lists every field-level problem; exit code 0 or 3.
 */
export function policy(args: readonly string[], io: CliIo): number {
  const [sub, ...rest] = args;
  if (sub === 'check') return policyCheck(rest, io);
  if (sub === 'validate') return policyValidate(rest, io);
  throw usageError(
    sub === undefined ? USAGE : `heddle policy: unknown subcommand ${JSON.stringify(sub)}\n${USAGE}`,
  );
}

function policyCheck(args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', POLICY_CHECK, args);
  const { strings, booleans } = parsed;
  const policyPath = requiredString(parsed, 'policy');
  const action = requiredString(parsed, 'action');
  if (strings.context !== undefined && strings['context-file'] !== undefined) {
    throw usageError('heddle policy check: give --context or --context-file, not both', 'context');
  }
  const pol = loadPolicy(resolve(io.cwd, policyPath));
  const context = buildContext(strings, io.cwd);
  const revocations = loadRevocations(strings, io.cwd);
  const agent = strings.agent ?? 'operator';
  const teardown = booleans.teardown === true;
  const compiled = compilePolicy(pol);
  const { decision } = evaluate(compiled, revocations.check, agent, action, context, teardown);
  const trace =
    booleans.explain === true ? explain(compiled, revocations.check, agent, action, context) : undefined;
  const result = {
    ...decision,
    action,
    agent,
    teardown,
    policy: { name: pol.name, hash: compiled.hash },
    ...(revocations.list ? { revocations: revocationSummary(revocations.list) } : {}),
    ...(trace ? { trace } : {}),
  };
  emit(io, booleans.json === true, result, () => [
    ...humanDecision(decision, pol.name, compiled.hash, trace),
    ...(revocations.list ? [humanRevocations(revocations.list)] : []),
  ]);
  return decision.verdict === 'permit' ? ExitCode.ok : ExitCode.checkFailed;
}

/**
 * The revocation check of `--revocations <file> --trust <file>`: the signed list `heddle revoke`
 * writes, its entries and list signature checked against the operator keys of the trust file. A list
 * that is missing, unreadable, tampered with or signed by another key fails closed (every action is
 * denied, rule `builtin:revocations_unavailable`), as it would on a host.
 */
function loadRevocations(
  strings: ParsedArgs['strings'],
  cwd: string,
): { check: RevocationCheck; list?: { file: string; list: RevocationList } } {
  const { revocations, trust } = strings;
  if (revocations === undefined) {
    if (trust !== undefined)
      throw usageError('heddle policy check: --trust goes with --revocations', 'trust');
    return { check: new RevocationSet() };
  }
  if (trust === undefined) {
    throw usageError(
      'heddle policy check: --revocations needs --trust <file>, the operator keys that sign the revocation list',
      'trust',
    );
  }
  const trustedKeys = guard(() => loadTrustFile(resolve(cwd, trust)).operatorKeys());
  const file = resolve(cwd, revocations);
  const list = RevocationList.loadOrFailClosed(file, { trustedKeys });
  return { check: list, list: { file, list } };
}

function revocationSummary(r: { file: string; list: RevocationList }): Record<string, unknown> {
  const { file, list } = r;
  return list.failure === undefined
    ? { file, generation: list.generation, entries: list.entries.length }
    : { file, failed_closed: true, failure: list.failure };
}

function humanRevocations(r: { file: string; list: RevocationList }): string {
  const { file, list } = r;
  return list.failure === undefined
    ? `revocations: ${file} (generation ${list.generation}, ${list.entries.length} entries)`
    : `revocations: UNUSABLE, failing closed (every action is denied): ${list.failure}`;
}

function humanDecision(d: Decision, name: string, hash: string, trace: RuleTrace[] | undefined): string[] {
  const lines = [`verdict: ${d.verdict}`, `rule:    ${d.rule}`, `reason:  ${d.reason}`];
  if (d.verdict === 'permit' && d.waiver) {
    const w = d.waiver;
    lines.push(
      `waiver:  ${w.waived_rule} waived (node tier ${w.node_tier}, decided as ${w.decided_as}): ${w.waived_reason}`,
    );
  }
  lines.push(`policy:  ${name} (${hash.slice(0, 16)})`);
  if (trace) {
    lines.push('', `  ${'rule'.padEnd(40)} ${'effect'.padEnd(7)} ${'result'.padEnd(15)} detail`);
    for (const t of trace) {
      lines.push(
        `  ${t.rule.padEnd(40)} ${t.effect.padEnd(7)} ${t.result.padEnd(15)} ${t.detail ?? ''}`.trimEnd(),
      );
    }
  }
  return lines;
}

function buildContext(strings: ParsedArgs['strings'], cwd: string): GateContext {
  let base: Record<string, unknown> = {};
  const { context, 'context-file': contextFile } = strings;
  if (context !== undefined) base = asObject(parseText(context, '--context'), '--context');
  if (contextFile !== undefined) {
    base = asObject(readJson(resolve(cwd, contextFile), 'context'), '--context-file');
  }
  if ('workload' in base && Object.keys(base).length === 1) base = asObject(base.workload, 'workload');
  const ctx: Record<string, unknown> = { ...base };
  for (const [flag, field] of Object.entries(CONTEXT_FLAGS)) {
    const v = strings[flag];
    if (v === undefined) continue;
    if (field === 'secrets' || field === 'emulated') {
      if (v !== 'true' && v !== 'false')
        throw usageError(`heddle policy check: --${flag} takes true or false`, field);
      ctx[field] = v === 'true';
    } else if (field === 'resource_cost') {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n)) {
        throw new CliError(
          'invalid_context',
          `--${flag}: ${JSON.stringify(v)} is not a number`,
          ExitCode.badInput,
          {
            field,
          },
        );
      }
      ctx[field] = n;
    } else if (field === 'signer_keys' || field === 'artifact_hashes') {
      ctx[field] = v === '' ? [] : v.split(',');
    } else ctx[field] = v;
  }
  return guard(() => parseContext(ctx));
}

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new CliError('invalid_context', `${what} must be a JSON object`, ExitCode.badInput, { field: '$' });
  }
  // cast: a non-null, non-array object, checked just above
  return v as Record<string, unknown>;
}

function parseText(text: string, what: string): unknown {
  try {
    return parseJson(text, { integersOnly: false });
  } catch (err) {
    // cast: parseJson throws only HeddleError (a JSON syntax or limit error)
    const e = err as HeddleError;
    throw new CliError('invalid_json', `${what}: ${e.message}`, ExitCode.badInput, {
      field: e.field ?? '$',
      cause: err,
    });
  }
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readTextBounded(path, 8 * 1024 * 1024);
  } catch (err) {
    throw new CliError(`${what}_unreadable`, `cannot read ${path}: ${errorMessage(err)}`, ExitCode.badInput);
  }
  return parseText(text, path);
}

function loadPolicy(path: string): Policy {
  return guard(() => loadPolicyFile(path));
}

/** Runs `fn`, mapping library errors to CLI errors (see {@link toCliError}). */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toCliError(err);
  }
}

/** Maps library errors to bad input (exit 3), keeping code, field and every issue in the message. */
function toCliError(err: unknown): unknown {
  if (err instanceof ValidationError) {
    const more =
      err.issues.length > 1 ? `\n${err.issues.map((i) => `  ${i.field}: ${i.message}`).join('\n')}` : '';
    return new CliError(err.code, `${err.message}${more}`, ExitCode.badInput, {
      field: err.field ?? '$',
      cause: err,
    });
  }
  if (err instanceof HeddleError && !(err instanceof CliError)) {
    return new CliError(err.code, err.message, ExitCode.badInput, {
      ...(err.field ? { field: err.field } : {}),
      cause: err,
    });
  }
  return err;
}

function policyValidate(args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', POLICY_VALIDATE, args);
  const { booleans } = parsed;
  const file = positional(parsed, 0);
  const json = booleans.json === true;
  let pol: Policy;
  try {
    pol = loadPolicyFile(resolve(io.cwd, file));
  } catch (err) {
    if (!(err instanceof ValidationError)) throw toCliError(err);
    emit(io, json, { valid: false, file, code: err.code, issues: err.issues }, () => [
      `${file}: invalid (${err.issues.length} problem${err.issues.length === 1 ? '' : 's'})`,
      ...err.issues.map((i) => `  ${i.field}: ${i.message}`),
    ]);
    return ExitCode.badInput;
  }
  const compiled = compilePolicy(pol);
  const count = (e: string): number => pol.rules.filter((r) => r.effect === e).length;
  const result = {
    valid: true,
    file,
    name: pol.name,
    hash: compiled.hash,
    rules: pol.rules.length,
    permit: count('permit'),
    deny: count('deny'),
    defer: count('defer'),
  };
  emit(io, json, result, () => [
    `${file}: valid policy ${JSON.stringify(pol.name)}: ${result.rules} rules (${result.permit} permit, ${result.deny} deny, ${result.defer} defer)`,
    `hash: ${compiled.hash}`,
  ]);
  return ExitCode.ok;
}
