import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './parse-exposition.js';
import { registerProcessMetrics } from './process-metrics.js';
import { MetricsError, MetricsRegistry } from './registry.js';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and histograms in the text exposition format', () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: 'x_total', help: 'Things.\nSecond line \\ here', labelNames: ['code'] });
    c.inc({ code: 'a' });
    c.inc({ code: 'a' }, 2);
    c.inc({ code: 'b"\\\n' });
    r.gauge({ name: 'g', help: 'A gauge.', collect: () => [{ labels: {}, value: 1.5 }] });
    const h = r.histogram({ name: 'lat_seconds', help: 'Latency.', labelNames: ['o'], buckets: [0.1, 1] });
    h.observe({ o: 'ok' }, 0.05);
    h.observe({ o: 'ok' }, 0.5);
    h.observe({ o: 'ok' }, 5);
    const text = r.render();
    expect(text).toContain('# HELP x_total Things.\\nSecond line \\\\ here\n# TYPE x_total counter\n');
    expect(text).toContain('x_total{code="a"} 3\n');
    expect(text).toContain('x_total{code="b\\"\\\\\\n"} 1\n');
    expect(text).toContain('# TYPE g gauge\ng 1.5\n');
    expect(text).toContain(
      'lat_seconds_bucket{o="ok",le="0.1"} 1\nlat_seconds_bucket{o="ok",le="1"} 2\nlat_seconds_bucket{o="ok",le="+Inf"} 3\nlat_seconds_sum{o="ok"} 5.55\nlat_seconds_count{o="ok"} 3\n',
    );
    const p = parseExposition(text);
    expect(sampleValue(p, 'x_total', { code: 'b"\\\n' })).toBe(1);
    expect(p.types.get('lat_seconds')).toBe('histogram');
    expect(p.help.get('x_total')).toBe('Things.\nSecond line \\ here');
  });

  it('a collector that throws is left out and counted, the rest of the scrape still answers', () => {
    const r = new MetricsRegistry();
    r.gauge({
      name: 'broken',
      help: 'Throws.',
      collect: () => {
        throw new Error('no');
      },
    });
    r.gauge({ name: 'fine', help: 'Works.', collect: () => [{ labels: {}, value: 7 }] });
    r.render();
    const p = parseExposition(r.render());
    expect(sampleValue(p, 'fine')).toBe(7);
    expect(p.samples.some((s) => s.name === 'broken')).toBe(false);
    expect(sampleValue(p, 'heddle_metrics_collect_errors_total', { metric: 'broken' })).toBe(2);
  });

  it('refuses bad names, label sets, negative increments and duplicate declarations', () => {
    const r = new MetricsRegistry();
    expect(() => r.counter({ name: '1bad', help: '' })).toThrow(MetricsError);
    const c = r.counter({ name: 'ok_total', help: '', labelNames: ['a'] });
    expect(() => r.counter({ name: 'ok_total', help: '' })).toThrow(/twice/);
    expect(() => c.inc({})).toThrow(/expected labels/);
    expect(() => c.inc({ a: 'x', b: 'y' })).toThrow(/expected labels/);
    expect(() => c.inc({ a: 'x' }, -1)).toThrow(/only grows/);
    expect(() => r.histogram({ name: 'h', help: '', labelNames: ['le'], buckets: [1] })).toThrow(/label/);
    expect(() => r.histogram({ name: 'h2', help: '', buckets: [2, 1] })).toThrow(/ascending/);
  });

  it('process metrics are present and plausible', () => {
    const r = new MetricsRegistry();
    registerProcessMetrics(r);
    const p = parseExposition(r.render());
    expect(sampleValue(p, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(sampleValue(p, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(p, 'process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    if (process.platform === 'linux') expect(sampleValue(p, 'process_open_fds')).toBeGreaterThan(2);
  });

  it('any label value and any finite count round-trips through render and parse (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), fc.nat({ max: 1e9 })), { maxLength: 8 }), (entries) => {
        const r = new MetricsRegistry();
        const c = r.counter({ name: 'p_total', help: 'P.', labelNames: ['v'] });
        const want = new Map<string, number>();
        for (const [v, n] of entries) {
          c.inc({ v }, n);
          want.set(v, (want.get(v) ?? 0) + n);
        }
        const p = parseExposition(r.render());
        for (const [v, n] of want) expect(sampleValue(p, 'p_total', { v })).toBe(n);
        expect(p.samples.filter((s) => s.name === 'p_total')).toHaveLength(want.size);
      }),
    );
  });

  it('the parser refuses junk', () => {
    for (const junk of [
      'x 1',
      '# TYPE x counter\nx{a="1"',
      '# TYPE x counter\nx{a=1} 1\n',
      '# TYPE x counter\nx one\n',
      '# TYPE x wrong\n',
      '# TYPE x counter\n# TYPE x counter\n',
      'y 1\n',
    ]) {
      expect(() => parseExposition(junk), junk).toThrow();
    }
  });
});
