// Small shared helpers for the benchmark scripts: timing loops and ratio reporting.

/** Runs `fn` repeatedly for about `ms` milliseconds after a warm-up; returns operations per second. */
export function opsPerSecond(fn, ms = 1000) {
  const warmUntil = performance.now() + Math.min(200, ms / 4);
  while (performance.now() < warmUntil) fn();
  let ops = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 64; i++) fn();
    ops += 64;
    now = performance.now();
  }
  return ops / ((now - start) / 1000);
}

/** Best of `rounds` measurements of `measure()` (higher is better), to damp noise from other processes. */
export function bestOf(rounds, measure) {
  let best = 0;
  for (let i = 0; i < rounds; i++) best = Math.max(best, measure());
  return best;
}

/** Prints rows `[name, value, unit, ratio?, target?]` as an aligned table. */
export function report(title, rows) {
  console.log(title);
  for (const [name, value, unit, ratio, target] of rows) {
    const v = value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2);
    const r = ratio === undefined ? '' : `  ${ratio.toFixed(2)}x baseline`;
    const t = target === undefined ? '' : `  (target ${target}: ${ratio >= target ? 'met' : 'NOT met'})`;
    console.log(`  ${name.padEnd(40)} ${v.padStart(14)} ${unit}${r}${t}`);
  }
}
