import { describe, expect, it } from 'vitest';
import { registerDaemonMetrics } from './daemon-metrics.js';
import { parseExposition, sampleValue } from './parse-exposition.js';
import { MetricsRegistry } from './registry.js';

describe('registerDaemonMetrics', () => {
  it('counts chain appends by outcome and reads the chain length and revocation generation at scrape', () => {
    const listeners: ((o: { ok: boolean; ms: number }) => void)[] = [];
    const chain = { size: 0, observe: (l: (o: { ok: boolean; ms: number }) => void) => listeners.push(l) };
    let generation = 3;
    const r = new MetricsRegistry();
    registerDaemonMetrics(r, { chain, chainHelp: 'events', revocationGeneration: () => generation });
    for (const l of listeners) {
      l({ ok: true, ms: 4 });
      l({ ok: true, ms: 6 });
      l({ ok: false, ms: 1 });
    }
    chain.size = 2;
    generation = 5;
    const f = parseExposition(r.render());
    expect(sampleValue(f, 'heddle_chain_append_duration_seconds_count')).toBe(2);
    expect(sampleValue(f, 'heddle_chain_append_duration_seconds_sum')).toBeCloseTo(0.01);
    expect(sampleValue(f, 'heddle_chain_append_failures_total')).toBe(1);
    expect(sampleValue(f, 'heddle_chain_events')).toBe(2);
    expect(sampleValue(f, 'heddle_revocation_generation')).toBe(5);
    expect(sampleValue(f, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
