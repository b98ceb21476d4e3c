import { ChainKind } from '@heddle/model';
import { MAX_GENERATION_STEP, PackageError, RevocationList } from '@heddle/package';
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
 * (`verify`, naming `body.list.<field>`) a list they do not sign; refuses (`governance`, field
 * `body.list.generation`) a generation lower than the one this host holds, or the same generation
 * with other content; writes a newer list crash-safely to the holder's file with its generation mark
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
    const held = holder.highestGeneration;
    if (list.generation < held) {
      throw refuse(
        'governance',
        `workload.revoke body.list.generation: ${list.generation} is older than generation ${held} held by this host`,
        'body.list.generation',
      );
    }
    if (list.generation - held > MAX_GENERATION_STEP) {
      throw refuse(
        'governance',
        `workload.revoke body.list.generation: ${list.generation} jumps more than ${MAX_GENERATION_STEP} above generation ${held} held by this host`,
        'body.list.generation',
      );
    }
    const dropped = holder.droppedEntry(list);
    if (dropped !== undefined) {
      throw refuse(
        'governance',
        `workload.revoke body.list.entries: the list lacks ${dropped}, revoked by a list this host held; entries are never removed`,
        'body.list.entries',
      );
    }
    let changed = false;
    if (list.generation === held && holder.failure === undefined) {
      if (!holder.holds(list)) {
        throw refuse(
          'governance',
          `workload.revoke body.list.generation: this host holds another list at generation ${held}`,
          'body.list.generation',
        );
      }
    } else {
      try {
        changed = holder.install(list);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        const code =
          err instanceof PackageError && err.code === 'revocation-rollback' ? 'governance' : 'runtime';
        throw refuse(code, `workload.revoke: the list could not be written: ${why}`, 'body.list.generation');
      }
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
