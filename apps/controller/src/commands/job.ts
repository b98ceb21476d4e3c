import { dirname, isAbsolute, resolve } from 'node:path';
import { positional } from '@heddle/cli-kit';
import { parseJobText } from '@heddle/control-plane/contract';
import { readTextBounded } from '@heddle/envelope';
import type { JobPlanAnswer, JobStatusAnswer, JobVersionAnswer } from '@heddle/operator-api';
import { badInput, ExitCode, usageError } from '../cli-error.js';
import { badValue } from '../command-def.js';
import { JOB_HISTORY, JOB_PLAN, JOB_REVERT, JOB_RUN, JOB_STATUS, JOB_STOP } from '../defs/jobs.js';
import { type Paint, paintState } from '../format/colour.js';
import { age, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { type OperatorContext, runOperator } from '../operator.js';
import { explainTable } from './place.js';

const USAGE =
  'usage: heddle job plan|run|status|history|revert|stop ... (heddle job <sub> --help shows each)';

/** The largest job file read (1 MiB). */
const MAX_JOB_FILE = 1 << 20;

/** `heddle job plan|run|status|history|revert|stop`: declarative jobs (docs/jobs.md). */
export function job(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'plan':
      return runOperator(JOB_PLAN, rest, io, async (ctx) => {
        const plan = await ctx.client().planJob(jobFile(ctx));
        ctx.emit(plan, () => planLines(plan, ctx.paint, ctx.parsed.booleans.explain === true));
        return plan.changes.some((c) => c.explanation !== null && c.explanation.outcome !== 'placed')
          ? ExitCode.checkFailed
          : ExitCode.ok;
      });
    case 'run':
      return runOperator(JOB_RUN, rest, io, async (ctx) => {
        const r = await ctx.client().runJob(jobFile(ctx));
        ctx.emit(r, () => [
          r.changed
            ? `job ${r.job.name}: version ${r.job.version} stored; the controller converges it (see heddle job status ${r.job.name})`
            : `job ${r.job.name}: unchanged, version ${r.job.version} runs this file`,
          ...statusLines(r.job, ctx.paint, ctx.now()),
        ]);
        return ExitCode.ok;
      });
    case 'status':
      return runOperator(JOB_STATUS, rest, io, async (ctx) => {
        const name = ctx.parsed.positionals[0];
        if (name === undefined) {
          const jobs = await ctx.client().jobs();
          ctx.emit({ jobs }, () => jobTable(jobs, ctx.paint));
        } else {
          const j = await ctx.client().job(name);
          ctx.emit({ job: j }, () => statusLines(j, ctx.paint, ctx.now()));
        }
        return ExitCode.ok;
      });
    case 'history':
      return runOperator(JOB_HISTORY, rest, io, async (ctx) => {
        const versions = await ctx.client().jobHistory(positional(ctx.parsed, 0));
        ctx.emit({ versions }, () => historyTable(versions, ctx.now()));
        return ExitCode.ok;
      });
    case 'revert':
      return runOperator(JOB_REVERT, rest, io, async (ctx) => {
        const text = positional(ctx.parsed, 1);
        if (!/^[1-9][0-9]{0,8}$/.test(text))
          throw badValue(
            'version',
            `${JSON.stringify(text)} is not a version (1, 2, ...; see heddle job history)`,
          );
        const r = await ctx.client().revertJob(positional(ctx.parsed, 0), Number(text));
        ctx.emit(r, () => [
          `job ${r.job.name}: version ${r.job.version} copies version ${text}; the controller rolls it out`,
          ...statusLines(r.job, ctx.paint, ctx.now()),
        ]);
        return ExitCode.ok;
      });
    case 'stop':
      return runOperator(JOB_STOP, rest, io, async (ctx) => {
        const j = await ctx.client().stopJob(positional(ctx.parsed, 0));
        ctx.emit({ job: j }, () => statusLines(j, ctx.paint, ctx.now()));
        return ExitCode.ok;
      });
    default:
      throw usageError(
        sub === undefined ? USAGE : `heddle job: unknown subcommand ${JSON.stringify(sub)}\n${USAGE}`,
      );
  }
}

/**
 * The job file the command names, parsed here first (`job_invalid` naming the field, before anything
 * is sent), with a relative `package` resolved against the file's directory.
 */
function jobFile(ctx: OperatorContext): Record<string, unknown> {
  const path = resolve(ctx.io.cwd, positional(ctx.parsed, 0));
  let text: string;
  try {
    text = readTextBounded(path, MAX_JOB_FILE);
  } catch (err) {
    throw badInput(
      'invalid_input',
      `cannot read job file ${path}: ${err instanceof Error ? err.message : String(err)}`,
      'file',
      err,
    );
  }
  const spec = parseJobText(text);
  // cast: the file parsed as a job spec, so it is a JSON object
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (spec.package !== undefined && !isAbsolute(spec.package))
    raw.package = resolve(dirname(path), spec.package);
  return raw;
}

function jobTable(jobs: readonly JobStatusAnswer[], paint: Paint): string[] {
  if (jobs.length === 0) return ['no jobs'];
  return table(
    ['JOB', 'TYPE', 'STATUS', 'VERSION', 'ROLLOUT', 'HEALTHY', 'WORKLOAD', 'BLOCKED'],
    jobs.map((j) => [
      j.name,
      j.type,
      paintState(paint, j.status),
      String(j.version),
      paintState(paint, j.rollout),
      `${j.healthy}/${j.desired}`,
      `${j.workload}@${j.workload_version}`,
      j.blocked === null ? '-' : j.blocked.slice(0, 60),
    ]),
  );
}

/** One job, for `job status|run|revert|stop`. */
export function statusLines(j: JobStatusAnswer, paint: Paint, now: number): string[] {
  const lines = [
    `job ${paint('bold', j.name)} (${j.type}): ${paintState(paint, j.status)}, version ${j.version}, rollout ${paintState(paint, j.rollout)}, last healthy version ${j.stable_version ?? '-'}`,
    `  ${j.workload}@${j.workload_version}, spec ${j.spec_hash.slice(0, 12)}, ${j.healthy}/${j.desired} healthy, updated ${age(j.updated_at_ms, now)} ago`,
  ];
  if (j.blocked !== null) lines.push(`  ${paint('yellow', 'blocked')}: ${j.blocked}`);
  if (j.detail !== null) lines.push(`  ${j.detail}`);
  if (j.instances.length > 0) {
    lines.push(
      ...table(
        ['INSTANCE', 'NODE', 'VERSION', 'STATE', 'HEALTHY'],
        j.instances.map((i) => [
          i.instance_id,
          shortId(i.node_id),
          String(i.version),
          paintState(paint, i.state),
          i.healthy ? 'yes' : 'no',
        ]),
      ),
    );
  }
  return lines;
}

function historyTable(versions: readonly JobVersionAnswer[], now: number): string[] {
  return table(
    ['VERSION', 'CAUSE', 'FROM', 'BY', 'PACKAGE', 'SPEC', 'AGE'],
    versions.map((v) => [
      `${v.version}${v.current ? '*' : ''}`,
      v.cause,
      v.reverted_from === null ? '-' : String(v.reverted_from),
      v.actor ?? '-',
      `${v.workload}@${v.workload_version}`,
      v.spec_hash.slice(0, 12),
      age(v.created_at_ms, now),
    ]),
  );
}

/** What `job plan` prints. */
export function planLines(plan: JobPlanAnswer, paint: Paint, explain: boolean): string[] {
  const head =
    plan.next_version === null
      ? `job ${plan.name}: the file is what version ${plan.current_version} runs; no new version`
      : `job ${plan.name}: would store version ${plan.next_version}${plan.current_version === null ? ' (a new job)' : ` (desired now: ${plan.current_version})`}`;
  const lines = [head, `  ${plan.workload}@${plan.workload_version}, spec ${plan.spec_hash.slice(0, 12)}`];
  if (plan.changes.length === 0) lines.push('no changes');
  else {
    lines.push(
      ...table(
        ['ACTION', 'NODE', 'INSTANCE', 'VERSION', 'WHY'],
        plan.changes.map((c) => [
          paintState(paint, c.action),
          c.node_id === null ? '-' : shortId(c.node_id),
          c.instance_id ?? '-',
          String(c.version),
          c.reason ?? c.explanation?.summary ?? '-',
        ]),
      ),
    );
  }
  for (const n of plan.nodes)
    if (!n.eligible) lines.push(`  not eligible: ${shortId(n.node_id)}: ${n.reason ?? '-'}`);
  if (explain) {
    for (const c of plan.changes) {
      if (c.explanation === null) continue;
      lines.push(
        `${c.action} ${c.instance_id ?? ''}`.trim(),
        c.explanation.summary,
        ...explainTable(c.explanation, paint),
      );
    }
  }
  lines.push('nothing was done (heddle job run <file> stores it)');
  return lines;
}
