import { randomUUID } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN } from '@heddle/control-plane/contract';
import {
  ApiError,
  type ExplanationAnswer,
  type PlaceAnswer,
  type PlaceCallOptions,
  REQUEST_ID_PATTERN,
} from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { badValue } from '../command-def.js';
import { PLACE } from '../defs/instances.js';
import { type Paint, paintState } from '../format/colour.js';
import { progressFor } from '../format/progress.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { parseConstraint, parseSpread } from '../label-args.js';
import { type OperatorContext, printError, runOperator } from '../operator.js';
import type { EarlyPlace } from '../place-early.js';
import { approvalLines } from './approvals.js';
import { type OrderDeps, orderOf } from './place-order.js';

/** The label parsers and the key pattern of the real order (see `OrderDeps`). */
const ORDER_DEPS: OrderDeps = { parseConstraint, parseSpread, keyPattern: IDEMPOTENCY_KEY_PATTERN };

/**
 * `heddle place <package-dir> ...`. With `early` (place-early.ts: the same order already sent while
 * this module loaded), its order and request id are used and its answer is read by the client as if
 * the client had sent it: every output and error is the same as without it.
 */
export function place(args: readonly string[], io: CliIo, early?: EarlyPlace): Promise<number> {
  return runOperator(PLACE, args, io, async (ctx) => {
    const order = early?.order ?? orderOf(ctx, ORDER_DEPS);
    const requestId = early?.requestId ?? ctx.parsed.strings['request-id'] ?? randomUUID();
    if (!REQUEST_ID_PATTERN.test(requestId)) {
      throw badValue(
        'request_id',
        '--request-id: expected 1..128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit',
      );
    }
    const bar = progressFor(io, ctx.parsed.booleans.json === true);
    let result: PlaceAnswer;
    try {
      const options: PlaceCallOptions =
        bar === undefined || order.dry_run === true
          ? { requestId }
          : { requestId, onProgress: (p) => bar.update(p) };
      const client = ctx.client();
      result = await (early === undefined
        ? client.place(order, options)
        : client.placeAnswer(early.sent, options));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'outcome_unknown' && order.idempotency_key !== undefined) {
        throw new ApiError(
          'outcome_unknown',
          `${err.message}; run the same command with --idempotency-key ${order.idempotency_key} to learn what it did (it never places twice)`,
          { cause: err },
        );
      }
      throw err;
    } finally {
      bar?.done();
    }
    if (result.status === 'awaiting_approval' && ctx.parsed.booleans.wait === true) {
      return waitForApproval(ctx, result);
    }
    ctx.emit(result, () => placeLines(result, ctx.paint, ctx.parsed.booleans.explain === true));
    if (result.status === 'unsettled') {
      printError(io, 'place', ctx.parsed.booleans.json === true, {
        code: 'unsettled',
        message: `the answer of ${result.attempts.at(-1)?.node_id ?? 'the node'} was lost and is not settled yet (decision ${result.decision_id}); the controller settles it, check heddle ps before placing again`,
      });
      return ExitCode.checkFailed;
    }
    if (result.status === 'dry_run' && result.explanation.outcome !== 'placed') return ExitCode.checkFailed;
    return ExitCode.ok;
  });
}

/** The human lines of a place result. */
export function placeLines(r: PlaceAnswer, paint: Paint, withTable: boolean): string[] {
  const lines: string[] = [];
  if (r.replayed === true)
    lines.push(paint('dim', 'answered from an earlier place with the same idempotency key'));
  if (r.status === 'placed' && r.instance !== null) {
    const i = r.instance;
    lines.push(
      `${paint('green', 'placed')} ${i.workload}@${i.version} as ${paint('bold', i.instance_id)} on ${i.node_id} (${i.variant}, ${i.runtime}): ${paintState(paint, i.state)}`,
      `decision ${r.decision_id}, order ${r.order_id}`,
    );
  } else if (r.status === 'dry_run') {
    lines.push(`dry run: ${r.explanation.summary}`);
  } else if (r.status === 'awaiting_approval') {
    const id = r.approval_id ?? '-';
    lines.push(
      `${paint('yellow', 'awaiting approval')} ${paint('bold', id)}: the policy defers this place to an operator; it is held, nothing is placed yet`,
      `see it with 'heddle approvals show ${id}'; an operator approves it with 'heddle approvals approve ${id}' (or rejects it)`,
    );
  } else {
    lines.push(`${paint('yellow', 'unsettled')}: decision ${r.decision_id}, order ${r.order_id}`);
  }
  for (const a of r.attempts) {
    if (a.outcome === 'placed') continue;
    lines.push(
      `  tried ${a.node_id} (${a.variant}): ${paintState(paint, a.outcome)}${a.code === null ? '' : ` ${a.code}`}${a.reason === null ? '' : `: ${a.reason}`}`,
    );
  }
  const showTable = withTable || (r.status === 'dry_run' && r.explanation.outcome !== 'placed');
  if (showTable) {
    if (r.status !== 'dry_run') lines.push(r.explanation.summary);
    lines.push(...explainTable(r.explanation, paint));
  }
  return lines;
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** The engine's explanation as a table: NODE, VERDICT, VARIANT, SCORE, DETAIL (score parts or reasons). */
export function explainTable(x: ExplanationAnswer, paint: Paint): string[] {
  const rows = x.rows.map((r) => [
    r.node_id,
    paintState(paint, r.verdict),
    r.variant === undefined ? '-' : `${r.variant} (${r.execution ?? '-'})`,
    r.score === undefined ? '-' : fmt(r.score),
    r.parts !== undefined
      ? Object.entries(r.parts)
          .filter(([, v]) => v !== 0)
          .map(([k, v]) => `${k}=${fmt(v)}`)
          .join(' ')
      : (r.failures ?? []).map((f) => `${f.constraint}: ${f.detail}`).join('; '),
  ]);
  if (rows.length === 0) return ['(no nodes)'];
  return table(['NODE', 'VERDICT', 'VARIANT', 'SCORE', 'DETAIL'], rows);
}

/** How often `place --wait` asks whether the approval was decided. */
const APPROVAL_POLL_MS = 500;

/**
 * `place --wait` of a held place: prints that it awaits approval, then asks the controller until the
 * request is decided (or expires) and its place is done; prints the outcome (`--json`: the final
 * `{"approval": ApprovalView}`). Exit 0 when it was placed, 1 otherwise.
 */
async function waitForApproval(ctx: OperatorContext, held: PlaceAnswer): Promise<number> {
  const json = ctx.parsed.booleans.json === true;
  if (!json) for (const line of placeLines(held, ctx.paint, false)) ctx.io.out(line);
  const id = held.approval_id ?? '';
  const client = ctx.client();
  for (;;) {
    const approval = await client.approval(id);
    const place = approval.place;
    if (approval.state !== 'pending' && place?.status !== 'held') {
      ctx.emit({ approval }, () => approvalLines(approval, ctx.paint, ctx.now()));
      return place?.status === 'placed' ? ExitCode.ok : ExitCode.checkFailed;
    }
    await new Promise((r) => setTimeout(r, APPROVAL_POLL_MS));
  }
}
