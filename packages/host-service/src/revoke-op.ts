import { ChainKind } from '@heddle/model';
import { PackageError, RevocationList } from '@heddle/package';
import { type CtlRequest, parseRequestBody, Refusal, type RevokeAnswer } from '@heddle/protocol';
import type { HostState } from './host-state.js';
import type { PlacedInstance } from './instance-record.js';

/** The key the list writes are serialised under in the host's {@link HostState.locks}. */
export const REVOKE_LOCK = '#revocation-list';

const refuse = (code: Refusal['code'], reason: string, field?: string): Refusal =>
  new Refusal(code, reason, { authenticated: true, ...(field === undefined ? {} : { field }) });

/**
 * `workload.revoke` (docs/protocol.md section 14.4, docs/trust-and-revocation.md): checks the signed list of the body against
 * `trustedKeys` (this node's own trust anchors' operator keys, never the controller's) and refuses
 * (`verify`, naming `body.list.<field>`) a list they do not sign; hands it to the holder's
 * `RevocationHolder.accept` (`@heddle/package`), so it refuses (`governance`, naming
 * `body.list.generation` or `body.list.entries`) a generation lower than the one this host holds, one
 * that jumps too far above it, the same generation with other content, or a list that lacks an entry
 * a list this host held had; writes a newer list crash-safely to the holder's file with its generation mark
 * and reloads it; tears down every instance the list in force revokes (forced, not gated, chained);
 * and chains `workload.revoke` (source host) with the generation, signer and torn-down ids. A list
 * the host already holds is not written again (`applied: false`), but the sweep still runs. A holder
 * built from a fixed list refuses (`runtime`): this host keeps no revocation file.
 */
export async function revokeOp(
  state: HostState,
  req: CtlRequest,
  trustedKeys: readonly string[],
): Promise<RevokeAnswer> {
  const body = parseRequestBody('workload.revoke', req.body);
  const holder = state.revocations;
  if (holder.path === undefined) {
    throw refuse('runtime', 'workload.revoke: this host keeps no revocation file', 'body.list');
  }
  let list: RevocationList;
  try {
    list = RevocationList.parse(JSON.stringify(body.list), { trustedKeys });
  } catch (err) {
    const field =
      err instanceof PackageError && err.field !== undefined ? `body.list.${err.field}` : 'body.list';
    const message = err instanceof Error ? err.message : String(err);
    const own = err instanceof PackageError ? `${err.field}: ` : undefined;
    const why = own !== undefined && message.startsWith(own) ? message.slice(own.length) : message;
    throw refuse(
      'verify',
      `workload.revoke ${field}: ${why} (checked against this node's operator keys)`,
      field,
    );
  }
  const { applied, tornDown } = await state.locks.run(REVOKE_LOCK, async () => {
    let taken: { readonly applied: boolean; readonly changed: boolean };
    try {
      taken = holder.accept(list);
    } catch (err) {
      throw acceptRefusal(err);
    }
    const changed = taken.changed;
    if (taken.applied) {
      if (holder.failure !== undefined) {
        // Written but not accepted on reload (the holder trusts other keys): everything is revoked now.
        state.onError(
          new Error(`the revocation list failed closed after workload.revoke: ${holder.failure}`),
        );
      }
    }
    return { applied: changed, tornDown: await state.enforceRevocations() };
  });
  await state.recordOrReport(ChainKind.revoke, {
    node: state.nodeId,
    requester: req.requester,
    decision_id: req.decision_id ?? null,
    generation: list.generation,
    signer: list.toJSON().signer ?? null,
    entries: list.entries.length,
    applied,
    torn_down: [...tornDown],
  });
  return { generation: list.generation, applied, torn_down: [...tornDown] };
}

/** The codes of `RevocationHolder.accept` that refuse the list itself (`governance`); the rest are faults (`runtime`). */
const REFUSED_LIST_CODES: ReadonlySet<string> = new Set([
  'revocation_rollback',
  'revocation_generation_jump',
  'revocation_entries_dropped',
  'revocation_generation_reused',
]);

/** What `workload.revoke` answers when the holder does not take the list (`RevocationHolder.accept`). */
function acceptRefusal(err: unknown): Refusal {
  const why = err instanceof Error ? err.message : String(err);
  if (err instanceof PackageError && REFUSED_LIST_CODES.has(err.code) && err.field !== undefined) {
    return refuse(
      'governance',
      `workload.revoke body.list.${why} (held by this host)`,
      `body.list.${err.field}`,
    );
  }
  return refuse('runtime', `workload.revoke: the list could not be written: ${why}`, 'body.list.generation');
}

/**
 * The re-check at every start: when the list in force revokes `p` (its package, a signer or an
 * artifact), tears it down (forced, not gated, chained; departed `revoked`) and returns the
 * `governance` refusal the start gets; undefined when nothing revokes it. The caller holds `p`'s lock.
 */
export async function revokedAtStart(state: HostState, p: PlacedInstance): Promise<Refusal | undefined> {
  const subject = state.revokedSubjectOf(p);
  if (subject === undefined) return undefined;
  const torn = await state.enforceRevocationsOf(p);
  const what = `${subject.kind} ${subject.ref}${subject.reason === undefined ? '' : ` (${subject.reason})`}`;
  const tail = torn
    ? `instance ${p.instanceId} torn down`
    : `the teardown of instance ${p.instanceId} failed, it stays listed`;
  return refuse('governance', `workload.start: revoked: ${what}; ${tail}`);
}
