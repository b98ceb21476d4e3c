import { ago, short } from '../format.js';
import { html } from '../html.js';
import type { NodeView } from '../types.js';

/** Labels, when the controller reports them for a node (`labels: {key: value}`); none otherwise. */
function labelsOf(n: NodeView): readonly [string, string][] {
  const labels: unknown = Reflect.get(n, 'labels');
  if (typeof labels !== 'object' || labels === null) return [];
  return Object.entries(labels).map(([k, v]) => [k, String(v)] as [string, string]);
}

/** The nodes: liveness, tier, software version, routes, facts (capabilities, expiry) and labels. */
export function Nodes(props: { nodes: readonly NodeView[] }) {
  if (props.nodes.length === 0) {
    return html`<p class="empty">No nodes yet. Add one with <code>heddle node add &lt;url&gt; --tier paired</code>.</p>`;
  }
  return html`<table>
    <caption>${props.nodes.length} known</caption>
    <thead><tr><th scope="col">Node</th><th scope="col">Liveness</th><th scope="col">Tier</th><th scope="col">Version</th><th scope="col">Routes</th><th scope="col">Instances</th><th scope="col">Last seen</th><th scope="col">Facts</th><th scope="col">Labels</th></tr></thead>
    <tbody>
      ${props.nodes.map((n) => {
        const labels = labelsOf(n);
        return html`<tr key=${n.node_id} data-node=${n.node_id}>
        <td><code title=${n.node_id}>${short(n.node_id)}</code><div class="sub">${n.url}</div>${n.last_error === null ? null : html`<div class="sub warn">${n.last_error}</div>`}</td>
        <td><span class=${`badge liveness-${n.liveness}`}>${n.liveness}</span></td>
        <td>${n.tier ?? html`<span class="warn">none (key pending)</span>`}${Reflect.get(n, 'cordoned') === true ? html` <span class="badge alert">cordoned</span>` : null}</td>
        <td>${n.software === null ? '-' : `${n.software.name} ${n.software.version}`}</td>
        <td>${n.routes.join(', ')}</td>
        <td>${n.instances}</td>
        <td>${ago(n.last_seen_ms)}</td>
        <td>${n.capabilities.length === 0 ? '-' : html`<details><summary>${n.capabilities.length} capabilities</summary><ul class="plain">${n.capabilities.map((c) => html`<li key=${c}><code>${c}</code></li>`)}</ul>${n.facts_expire_at_ms === null ? null : html`<div class="sub">expire ${new Date(n.facts_expire_at_ms).toLocaleString()}</div>`}</details>`}</td>
        <td>${labels.length === 0 ? '-' : labels.map(([k, v]) => html`<span class="label" key=${k}>${k}=${v}</span> `)}</td>
      </tr>`;
      })}
    </tbody>
  </table>`;
}
