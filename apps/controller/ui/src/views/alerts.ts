import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { ago, short } from '../format.js';
import { html } from '../html.js';
import type { AlertRecord } from '../types.js';

/** The alerts (open first), each with an Acknowledge button. */
export function Alerts(props: { alerts: readonly AlertRecord[]; onChange: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const open = props.alerts.filter((a) => a.acked_at_ms === null);
  const closed = props.alerts.filter((a) => a.acked_at_ms !== null);
  const ack = async (id: string): Promise<void> => {
    try {
      await post(`/v1/alerts/${encodeURIComponent(id)}/ack`);
      setError(null);
      props.onChange();
    } catch (err) {
      setError(String(err instanceof Error ? err.message : err));
    }
  };
  const row = (a: AlertRecord) => html`<tr key=${a.alert_id} data-alert=${a.alert_id}>
    <td><code>${a.alert_id}</code></td>
    <td><span class="badge alert">${a.reason}</span></td>
    <td><a href=${`#/instances/${a.instance_id}`}><code>${a.instance_id}</code></a></td>
    <td><code title=${a.node_id}>${short(a.node_id)}</code></td>
    <td>${ago(a.raised_at_ms)}</td>
    <td>${a.detail}</td>
    <td>${a.acked_at_ms === null ? html`<button type="button" onClick=${() => ack(a.alert_id)} aria-label=${`Acknowledge ${a.alert_id}`}>Acknowledge</button>` : `acknowledged ${ago(a.acked_at_ms)}`}</td>
  </tr>`;
  const head = html`<thead><tr><th scope="col">Alert</th><th scope="col">Reason</th><th scope="col">Instance</th><th scope="col">Node</th><th scope="col">Raised</th><th scope="col">Detail</th><th scope="col">Action</th></tr></thead>`;
  return html`<section aria-labelledby="alerts-h">
    <h2 id="alerts-h">Alerts</h2>
    ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
    ${open.length === 0 ? html`<p class="empty">No open alerts.</p>` : html`<table><caption>Open (${open.length})</caption>${head}<tbody>${open.map(row)}</tbody></table>`}
    ${closed.length === 0 ? null : html`<details><summary>Acknowledged (${closed.length})</summary><table>${head}<tbody>${closed.map(row)}</tbody></table></details>`}
  </section>`;
}
