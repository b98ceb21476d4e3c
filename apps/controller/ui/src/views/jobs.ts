import { html } from '../html.js';
import type { JobStatusAnswer } from '../types.js';

/** The declarative jobs (docs/jobs.md), read only: one row per job, its instances' health, what blocks it. */
export function Jobs(props: { jobs: readonly JobStatusAnswer[] }) {
  if (props.jobs.length === 0) {
    return html`<section aria-labelledby="jobs-h">
      <h2 id="jobs-h">Jobs</h2>
      <p class="empty">This controller has no jobs yet. Run one with <code>heddle job run &lt;file&gt;</code> (docs/jobs.md); it is listed here, and its changes arrive on the event stream.</p>
    </section>`;
  }
  const row = (j: JobStatusAnswer) => html`<tr key=${j.name} data-job=${j.name}>
    <td><code>${j.name}</code></td>
    <td>${j.type}</td>
    <td><span class=${`badge ${j.status}`}>${j.status}</span></td>
    <td>${j.version}</td>
    <td><span class=${`badge ${j.rollout}`}>${j.rollout}</span></td>
    <td>${`${j.healthy}/${j.desired}`}</td>
    <td><code>${`${j.workload}@${j.workload_version}`}</code></td>
    <td>${j.blocked ?? j.detail ?? ''}</td>
  </tr>`;
  return html`<section aria-labelledby="jobs-h">
    <h2 id="jobs-h">Jobs</h2>
    <table>
      <caption>Jobs (${props.jobs.length})</caption>
      <thead><tr><th scope="col">Job</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Rollout</th><th scope="col">Healthy</th><th scope="col">Package</th><th scope="col">Blocked or detail</th></tr></thead>
      <tbody>${props.jobs.map(row)}</tbody>
    </table>
  </section>`;
}
