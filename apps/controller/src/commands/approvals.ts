import { positional } from '@heddle/cli-kit';
import { APPROVAL_STATES, type ApprovalView } from '@heddle/control-plane/contract';
import { ExitCode, usageError } from '../cli-error.js';
import { badValue, choiceFlag } from '../command-def.js';
import { APPROVALS_APPROVE, APPROVALS_LS, APPROVALS_REJECT, APPROVALS_SHOW } from '../defs/approvals.js';
import { type Paint, paintState } from '../format/colour.js';
import { age, shortDuration, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { type OperatorContext, runOperator } from '../operator.js';

const USAGE = 'usage: heddle approvals ls|show|approve|reject ... (heddle approvals <sub> --help shows each)';

/** `heddle approvals ls|show|approve|reject`: the places the policy defers to an operator. */
export function approvals(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'ls':
    case 'list':
      return runOperator(APPROVALS_LS, rest, io, async (ctx) => {
        const given = ctx.parsed.strings.state;
        const state =
          given !== undefined
            ? choiceFlag('state', given, APPROVAL_STATES)
            : ctx.parsed.booleans.all === true
              ? undefined
              : 'pending';
        const list = await ctx.client().approvals(state === undefined ? {} : { state });
        ctx.emit({ approvals: list }, () => approvalTable(list, ctx.paint, ctx.now()));
        return ExitCode.ok;
      });
    case 'show':
      return runOperator(APPROVALS_SHOW, rest, io, async (ctx) => {
        const approval = await ctx.client().approval(positional(ctx.parsed, 0));
        ctx.emit({ approval }, () => approvalLines(approval, ctx.paint, ctx.now()));
        return ExitCode.ok;
      });
    case 'approve':
      return runOperator(APPROVALS_APPROVE, rest, io, (ctx) => decide(ctx, 'approve'));
    case 'reject':
      return runOperator(APPROVALS_REJECT, rest, io, (ctx) => decide(ctx, 'reject'));
    default:
      throw usageError(
        sub === undefined ? USAGE : `heddle approvals: unknown subcommand ${JSON.stringify(sub)}\n${USAGE}`,
      );
  }
}

async function decide(ctx: OperatorContext, verb: 'approve' | 'reject'): Promise<number> {
  const id = positional(ctx.parsed, 0);
  const note = ctx.parsed.strings.note;
  if (note !== undefined && note.length > 2048) throw badValue('note', '--note: longer than 2048 characters');
  const client = ctx.client();
  const approval = verb === 'approve' ? await client.approve(id, note) : await client.reject(id, note);
  ctx.emit({ approval }, () => approvalLines(approval, ctx.paint, ctx.now()));
  const status = approval.place?.status;
  return status === 'failed' || status === 'unsettled' || (verb === 'approve' && status === 'refused')
    ? ExitCode.checkFailed
    : ExitCode.ok;
}

/** The `approvals ls` table. */
export function approvalTable(list: readonly ApprovalView[], paint: Paint, now: number): string[] {
  if (list.length === 0) return ['no approval requests'];
  const rows = list.map((a) => [
    a.approval_id,
    paintState(paint, a.state),
    a.place === null ? '-' : `${a.place.workload}@${a.place.version}`,
    a.place === null ? '-' : shortId(a.place.node_id),
    a.rule,
    a.place === null ? '-' : paintState(paint, a.place.status),
    a.state === 'pending'
      ? `in ${shortDuration(Math.max(0, a.expires_at_ms - now))}`
      : age(a.created_at_ms, now),
  ]);
  return table(['APPROVAL', 'STATE', 'WORKLOAD', 'NODE', 'RULE', 'PLACE', 'EXPIRES/AGE'], rows);
}

/** One request, for `approvals show|approve|reject`. */
export function approvalLines(a: ApprovalView, paint: Paint, now: number): string[] {
  const out = [
    `approval ${a.approval_id}: ${paintState(paint, a.state)}`,
    `  rule      ${a.rule}: ${a.reason}`,
    `  asked     ${age(a.created_at_ms, now)} ago by ${a.agent} (${a.action})`,
  ];
  if (a.state === 'pending') out.push(`  expires   in ${shortDuration(Math.max(0, a.expires_at_ms - now))}`);
  if (a.decided_by !== null)
    out.push(`  decided   by ${a.decided_by}${a.note === null ? '' : `: ${a.note}`}`);
  if (a.outcome !== null)
    out.push(`  outcome   ${a.outcome.verdict} (${a.outcome.rule}): ${a.outcome.reason}`);
  const p = a.place;
  if (p === null) {
    out.push('  place     none held (its order was not kept)');
    return out;
  }
  out.push(
    `  place     ${p.workload}@${p.version} on ${p.node_id} (${p.variant}): ${paintState(paint, p.status)}`,
  );
  if (p.instance_id !== null) out.push(`  instance  ${p.instance_id} (order ${p.order_id ?? '-'})`);
  if (p.detail !== null) out.push(`  detail    ${p.detail}`);
  if (a.state === 'pending') {
    out.push(
      `approve with 'heddle approvals approve ${a.approval_id}', or reject with 'heddle approvals reject ${a.approval_id}'`,
    );
  }
  return out;
}
