import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { ago, short } from '../format.js';
import { html } from '../html.js';
import type { DecisionAnswer, ExplainRowAnswer, InstanceLogs, Placement } from '../types.js';

/** One instance: its record, actions (start, stop, unload), its logs and the decision that placed it. */
export function Instance(props: { id: string; placement: Placement | undefined; onChange: () => void }) {
  const { id, placement } = props;
  const [logs, setLogs] = useState<InstanceLogs | null>(null);
  const [logError, setLogError] = useState<string | null>(null);
  const [decision, setDecision] = useState<DecisionAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const state = placement?.state;
  useEffect(() => {
    get<InstanceLogs>(`/v1/instances/${encodeURIComponent(id)}/logs?lines=200`).then(
      (l) => {
        setLogs(l);
        setLogError(null);
      },
      (e: unknown) => setLogError(String(e instanceof Error ? e.message : e)),
    );
  }, [id, state]);
  const decisionId = placement?.decision_id;
  useEffect(() => {
    if (decisionId === undefined) return;
    get<DecisionAnswer>(`/v1/decisions/${decisionId}`).then(setDecision, () => setDecision(null));
  }, [decisionId]);
  if (placement === undefined)
    return html`<p class="empty">No instance ${id} (it may have been removed). <a href="#/instances">All instances</a></p>`;
  const act = async (verb: 'start' | 'stop' | 'unload'): Promise<void> => {
    setBusy(true);
    try {
      await post(`/v1/instances/${encodeURIComponent(id)}/${verb}`);
      setError(null);
      props.onChange();
    } catch (err) {
      setError(String(err instanceof Error ? err.message : err));
    } finally {
      setBusy(false);
    }
  };
  const p = placement;
  return html`<section aria-labelledby="instance-h">
    <p><a href="#/instances">← All instances</a></p>
    <h2 id="instance-h">Instance <code>${p.instance_id}</code></h2>
    <dl class="facts">
      <dt>State</dt><dd><span class=${`badge state-${p.state}`} id="instance-state">${p.state}</span></dd>
      <dt>Workload</dt><dd>${p.workload}@${p.version} (${p.variant}, ${p.runtime})</dd>
      <dt>Node</dt><dd><code>${p.node_id}</code></dd>
      <dt>Order</dt><dd><code>${p.order_id}</code></dd>
      <dt>Placed</dt><dd>${ago(p.placed_at_ms)}${p.replaces === null || p.replaces === undefined ? '' : html`, replacing <a href=${`#/instances/${p.replaces}`}><code>${p.replaces}</code></a>`}</dd>
    </dl>
    <div class="actions">
      <button type="button" disabled=${busy} onClick=${() => act('start')}>Start</button>
      <button type="button" disabled=${busy} onClick=${() => act('stop')}>Stop</button>
      <button type="button" class="danger" disabled=${busy} onClick=${() => act('unload')}>Unload</button>
    </div>
    ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
    <h3>Logs</h3>
    ${logError !== null ? html`<p class="empty">Logs unavailable: ${logError}</p>` : logs === null ? html`<p class="empty">Loading…</p>` : html`<pre class="logs" tabindex="0" aria-label="instance logs">${logs.lines.length === 0 ? '(no output)' : logs.lines.join('\n')}</pre>`}
    <h3>Decision</h3>
    ${decision === null ? html`<p class="empty">Decision <code>${short(p.decision_id)}</code> not found in the chain.</p>` : html`<${Decision} decision=${decision} />`}
  </section>`;
}

/** A place decision: what the chain recorded, and the engine's explain table when it was kept. */
function Decision(props: { decision: DecisionAnswer }) {
  const { event, explanation } = props.decision;
  return html`<div>
    <p>Chain event #${event.seq} <code title=${event.hash}>${short(event.hash)}</code>, ${new Date(event.ts).toLocaleString()} (<a href=${`#/audit/${event.seq}`}>inclusion proof</a>).</p>
    ${
      explanation === null
        ? html`<p class="empty">The engine's explain table is kept in memory for the latest places of this controller process only (not for reschedules, nor across a restart). The chained decision:</p><pre>${JSON.stringify(event.payload, null, 2)}</pre>`
        : html`<p>${explanation.summary}</p>
        <table class="explain"><caption>Explain table</caption>
          <thead><tr><th scope="col">Node</th><th scope="col">Verdict</th><th scope="col">Variant</th><th scope="col">Score</th><th scope="col">Reasons</th></tr></thead>
          <tbody>${explanation.rows.map(
            (r: ExplainRowAnswer) => html`<tr key=${r.node_id}>
            <td><code title=${r.node_id}>${short(r.node_id)}</code></td>
            <td><span class=${`badge verdict-${r.verdict}`}>${r.verdict}</span></td>
            <td>${r.variant ?? '-'}${r.execution === undefined ? '' : ` (${r.execution})`}</td>
            <td>${r.score === undefined ? '-' : r.score.toFixed(3)}</td>
            <td>${(r.failures ?? []).map((f) => html`<div key=${f.constraint}>${f.constraint}: ${f.detail}</div>`)}</td>
          </tr>`,
          )}</tbody>
        </table>`
    }
  </div>`;
}
