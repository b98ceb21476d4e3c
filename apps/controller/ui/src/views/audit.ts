import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { short } from '../format.js';
import { html } from '../html.js';
import type { ChainEventAnswer, ChainEventProofAnswer, ChainHeadAnswer } from '../types.js';

/** The audit chain: head, root and verification, the latest events, and one event's inclusion proof. */
export function Audit(props: { selected: string | undefined; version: number }) {
  const [head, setHead] = useState<ChainHeadAnswer | null>(null);
  const [events, setEvents] = useState<readonly ChainEventAnswer[]>([]);
  const [proof, setProof] = useState<ChainEventProofAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    Promise.all([
      get<ChainHeadAnswer>('/v1/chain'),
      get<{ events: ChainEventAnswer[] }>('/v1/chain/events?limit=30'),
    ]).then(
      ([h, e]) => {
        setHead(h);
        setEvents(e.events);
        setError(null);
      },
      (err: unknown) => setError(String(err instanceof Error ? err.message : err)),
    );
  }, [props.version]);
  useEffect(() => {
    if (props.selected === undefined) {
      setProof(null);
      return;
    }
    get<ChainEventProofAnswer>(`/v1/chain/events/${encodeURIComponent(props.selected)}`).then(
      setProof,
      (err: unknown) => setError(String(err instanceof Error ? err.message : err)),
    );
  }, [props.selected, props.version]);
  return html`<section aria-labelledby="audit-h">
    <h2 id="audit-h">Audit chain</h2>
    ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
    ${
      head === null
        ? html`<p class="empty">Loading…</p>`
        : html`<dl class="facts">
      <dt>Events</dt><dd>${head.size}</dd>
      <dt>Head</dt><dd><code>${head.head}</code></dd>
      <dt>Merkle root</dt><dd><code>${head.root}</code></dd>
      <dt>Verification</dt><dd id="chain-verify">${
        head.verify.ok
          ? html`<span class="badge ok">verified</span> every hash and link of ${head.verify.size} events recomputed`
          : html`<span class="badge alert">broken</span> ${head.verify.failure?.message ?? ''}`
      }</dd>
    </dl>`
    }
    ${
      proof === null
        ? null
        : html`<div class="proof" aria-labelledby="proof-h">
      <h3 id="proof-h">Event #${proof.event.seq}: ${proof.event.kind}</h3>
      <pre>${JSON.stringify(proof.event.payload, null, 2)}</pre>
      <h4>Inclusion proof</h4>
      <dl class="facts">
        <dt>Leaf (event hash)</dt><dd><code>${proof.proof.leaf}</code></dd>
        <dt>Tree size</dt><dd>${proof.proof.size}</dd>
        <dt>Root</dt><dd><code>${proof.proof.root}</code> ${head !== null && head.root === proof.proof.root ? html`<span class="badge ok">matches the head's root</span>` : null}</dd>
        <dt>Audit path</dt><dd><ol class="plain">${proof.proof.path.map((h, i) => html`<li key=${i}><code>${h}</code></li>`)}</ol></dd>
      </dl>
      <p class="help">Check it offline with <code>verifyInclusion</code> of <code>@heddle/chain</code> against a root you trust (a signed checkpoint's).</p>
    </div>`
    }
    <table><caption>Latest events</caption>
      <thead><tr><th scope="col">Seq</th><th scope="col">Time</th><th scope="col">Source</th><th scope="col">Kind</th><th scope="col">Hash</th></tr></thead>
      <tbody>${events.map(
        (e) => html`<tr key=${e.seq}>
        <td><a href=${`#/audit/${e.seq}`} aria-label=${`Event ${e.seq} and its inclusion proof`}>${e.seq}</a></td>
        <td>${new Date(e.ts).toLocaleTimeString([], { hour12: false })}</td>
        <td>${e.source}</td><td>${e.kind}</td><td><code>${short(e.hash)}</code></td>
      </tr>`,
      )}</tbody>
    </table>
  </section>`;
}
