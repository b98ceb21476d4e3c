import { ago, short } from '../format.js';
import { html } from '../html.js';
import type { Placement } from '../types.js';

const GONE = new Set(['lost', 'rescheduled', 'revoked', 'unloaded']);

/** The instances (those still on their node first; the gone ones folded away). */
export function Instances(props: { instances: readonly Placement[] }) {
  const live = props.instances.filter((i) => !GONE.has(i.state));
  const gone = props.instances.filter((i) => GONE.has(i.state));
  const row = (i: Placement) => html`<tr key=${i.instance_id} data-instance=${i.instance_id}>
    <td><a href=${`#/instances/${i.instance_id}`}><code>${i.instance_id}</code></a></td>
    <td>${i.workload}@${i.version}</td>
    <td><span class=${`badge state-${i.state}`}>${i.state}</span></td>
    <td><code title=${i.node_id}>${short(i.node_id)}</code></td>
    <td>${i.variant}</td>
    <td>${ago(i.placed_at_ms)}</td>
  </tr>`;
  const head = html`<thead><tr><th scope="col">Instance</th><th scope="col">Workload</th><th scope="col">State</th><th scope="col">Node</th><th scope="col">Variant</th><th scope="col">Placed</th></tr></thead>`;
  return html`<section aria-labelledby="instances-h">
    <h2 id="instances-h">Instances</h2>
    ${live.length === 0 ? html`<p class="empty">No instances on any node. Place one with <code>heddle place &lt;dir&gt;</code>.</p>` : html`<table id="instances-table"><caption>On their nodes (${live.length})</caption>${head}<tbody>${live.map(row)}</tbody></table>`}
    ${gone.length === 0 ? null : html`<details><summary>Gone (${gone.length})</summary><table>${head}<tbody>${gone.map(row)}</tbody></table></details>`}
  </section>`;
}
