import { resolve } from 'node:path';
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
  type RevocationCheck,
  RevocationSet,
  type RuleTrace,
  ValidationError,
} from '@heddle/gate';
import { loadTrustFile, RevocationList } from '@heddle/package';
import { parseCommandArgs } from '../args.js';
import { CliError, ExitCode, usageError } from '../cli-error.js';
import { messageOf } from '../error-text.js';
import { type CliIo, emit } from '../io.js';

const USAGE = [
  'usage: heddle policy check --policy <file> --action <action> [--context <json> | --context-file <file>]',
  '         [--kind K] [--package-trust T] [--node-tier T] [--network N] [--secrets true|false]',
  '         [--emulated true|false] [--accelerator A] [--resource-cost 0..1] [--package-id ID]',
  '         [--signer-keys K1,K2] [--artifact-hashes H1,H2] [--agent NAME] [--teardown]',
  '         [--revocations <file> --trust <file>] [--explain] [--json]',
  '       heddle policy validate <file> [--json]',
].join('\n');

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

const CONTEXT_FLAGS: Record<string, keyof GateContext> = {
  kind: 'kind',
  'package-trust': 'package_trust',
  'node-tier': 'node_tier',
  network: 'network',
  secrets: 'secrets',
  emulated: 'emulated',
  accelerator: 'accelerator',
  'resource-cost': 'resource_cost',
  'package-id': 'package_id',
  'signer-keys': 'signer_keys',
  'artifact-hashes': 'artifact_hashes',
};

function policyCheck(args: readonly string[], io: CliIo): number {
  const spec: Record<string, 'string' | 'boolean'> = {
    policy: 'string',
    action: 'string',
    context: 'string',
    'context-file': 'string',
    agent: 'string',
    teardown: 'boolean',
    revocations: 'string',
    trust: 'string',
    explain: 'boolean',
  };
  for (const f of Object.keys(CONTEXT_FLAGS)) spec[f] = 'string';
  const { flags } = parseCommandArgs('policy check', args, spec, { min: 0, max: 0, names: '' });
  const policyPath = flags.policy as string | undefined;
  const action = flags.action as string | undefined;
  if (policyPath === undefined)
    throw usageError(`heddle policy check: --policy is required\n${USAGE}`, 'policy');
  if (action === undefined) throw usageError(`heddle policy check: --action is required\n${USAGE}`, 'action');
  if (flags.context !== undefined && flags['context-file'] !== undefined) {
    throw usageError('heddle policy check: give --context or --context-file, not both', 'context');
  }
  const pol = loadPolicy(resolve(io.cwd, policyPath));
  const context = buildContext(flags, io.cwd);
  const revocations = loadRevocations(flags, io.cwd);
  const agent = (flags.agent as string | undefined) ?? 'operator';
  const teardown = flags.teardown === true;
  const compiled = compilePolicy(pol);
  const { decision } = evaluate(compiled, revocations.check, agent, action, context, teardown);
  const trace =
    flags.explain === true ? explain(compiled, revocations.check, agent, action, context) : undefined;
  const result = {
    ...decision,
    action,
    agent,
    teardown,
    policy: { name: pol.name, hash: compiled.hash },
    ...(revocations.list ? { revocations: revocationSummary(revocations.list) } : {}),
    ...(trace ? { trace } : {}),
  };
  emit(io, flags.json === true, result, () => [
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
  flags: Readonly<Record<string, string | boolean | undefined>>,
  cwd: string,
): { check: RevocationCheck; list?: { file: string; list: RevocationList } } {
  if (flags.revocations === undefined) {
    if (flags.trust !== undefined)
      throw usageError('heddle policy check: --trust goes with --revocations', 'trust');
    return { check: new RevocationSet() };
  }
  if (typeof flags.trust !== 'string') {
    throw usageError(
      'heddle policy check: --revocations needs --trust <file>, the operator keys that sign the revocation list',
      'trust',
    );
  }
  const trustedKeys = guard(() => loadTrustFile(resolve(cwd, flags.trust as string)).operatorKeys());
  const file = resolve(cwd, flags.revocations as string);
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

function buildContext(
  flags: Readonly<Record<string, string | boolean | undefined>>,
  cwd: string,
): GateContext {
  let base: Record<string, unknown> = {};
  if (flags.context !== undefined)
    base = asObject(parseText(flags.context as string, '--context'), '--context');
  if (flags['context-file'] !== undefined) {
    base = asObject(readJson(resolve(cwd, flags['context-file'] as string), 'context'), '--context-file');
  }
  if ('workload' in base && Object.keys(base).length === 1) base = asObject(base.workload, 'workload');
  const ctx: Record<string, unknown> = { ...base };
  for (const [flag, field] of Object.entries(CONTEXT_FLAGS)) {
    const v = flags[flag];
    if (typeof v !== 'string') continue;
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
  return v as Record<string, unknown>;
}

function parseText(text: string, what: string): unknown {
  try {
    return parseJson(text, { integersOnly: false });
  } catch (err) {
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
    throw new CliError(`${what}_unreadable`, `cannot read ${path}: ${messageOf(err)}`, ExitCode.badInput);
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
  const { flags, positionals } = parseCommandArgs(
    'policy validate',
    args,
    {},
    { min: 1, max: 1, names: '<file> [--json]' },
  );
  const file = positionals[0] as string;
  const json = flags.json === true;
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
