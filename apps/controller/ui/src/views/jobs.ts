import { html } from '../html.js';

/** Jobs do not exist in this controller yet: a clear empty state, not a fake list. */
export function Jobs() {
  return html`<section aria-labelledby="jobs-h">
    <h2 id="jobs-h">Jobs</h2>
    <p class="empty">This controller has no jobs yet. Batch jobs are not part of this version of Heddle: once the
    operator API serves them they will be listed here, and their changes will arrive on the event stream.</p>
  </section>`;
}
