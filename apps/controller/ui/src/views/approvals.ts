import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { ago, short } from '../format.js';
import { html } from '../html.js';
import type { Approval } from '../types.js';

/**
 * The approvals: decisions deferred to an operator (`GET /v1/approvals`), pending ones with Approve
 * and Reject. `available` is false when this controller does not serve approvals.
 */
export function Approvals(props: {
  approvals: readonly Approval[];
  available: boolean;
  onChange: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  if (!props.available) {
    return html`<section aria-labelledby="approvals-h"><h2 id="approvals-h">Approvals</h2>
      <p class="empty">This controller does not serve approvals.</p></section>`;
  }
  const decide = async (id: string, verb: 'approve' | 'reject'): Promise<void> => {
    setBusy(id);
    try {
      await post(`/v1/approvals/${encodeURIComponent(id)}/${verb}`);
      setError(null);
      props.onChange();
    } catch (err) {
      setError(String(err instanceof Error ? err.message : err));
    } finally {
      setBusy(null);
    }
  };
  const pending = props.approvals.filter((a) => a.state === 'pending');
  const decided = props.approvals.filter((a) => a.state !== 'pending');
  const row = (a: Approval) => html`<tr key=${a.approval_id} data-approval=${a.approval_id}>
    <td><code title=${a.approval_id}>${short(a.approval_id)}</code></td>
    <td><span class=${`badge approval-${a.state}`}>${a.state}</span></td>
    <td>${a.place === null ? '-' : `${a.place.workload}@${a.place.version}`}</td>
    <td><code title=${a.place?.node_id ?? ''}>${short(a.place?.node_id)}</code></td>
    <td>${a.reason} <span class="sub">(rule ${a.rule})</span></td>
    <td>${ago(a.created_at_ms)}</td>
    <td>${
      a.state !== 'pending'
        ? html`${a.decided_by ?? '-'}${a.place === null ? null : html`<div class="sub">place ${a.place.status}${a.place.instance_id === null ? '' : `: ${a.place.instance_id}`}</div>`}`
        : html`<div class="actions">
          <button type="button" disabled=${busy === a.approval_id} onClick=${() => decide(a.approval_id, 'approve')} aria-label=${`Approve ${a.approval_id}`}>Approve</button>
          <button type="button" class="danger" disabled=${busy === a.approval_id} onClick=${() => decide(a.approval_id, 'reject')} aria-label=${`Reject ${a.approval_id}`}>Reject</button>
        </div>`
    }</td>
  </tr>`;
  const head = html`<thead><tr><th scope="col">Approval</th><th scope="col">State</th><th scope="col">Workload</th><th scope="col">Node</th><th scope="col">Why</th><th scope="col">Requested</th><th scope="col">Decision</th></tr></thead>`;
  return html`<section aria-labelledby="approvals-h">
    <h2 id="approvals-h">Approvals</h2>
    ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
    ${pending.length === 0 ? html`<p class="empty">Nothing waits for an approval.</p>` : html`<table><caption>Pending (${pending.length})</caption>${head}<tbody>${pending.map(row)}</tbody></table>`}
    ${decided.length === 0 ? null : html`<table><caption>Decided (${decided.length})</caption>${head}<tbody>${decided.map(row)}</tbody></table>`}
  </section>`;
}
