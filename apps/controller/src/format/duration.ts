/**
 * A short age or duration for a table: `850ms`, `12s`, `3m`, `5h`, `2d`; whole units, rounded down;
 * negative durations (a clock ahead of ours) read as `0s`.
 */
export function shortDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0s';
  if (ms < 1000) return ms === 0 ? '0s' : `${Math.floor(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** The age of something that happened at `atMs`, seen at `nowMs` (see {@link shortDuration}); `-` for null. */
export function age(atMs: number | null | undefined, nowMs: number): string {
  if (atMs === null || atMs === undefined) return '-';
  return shortDuration(nowMs - atMs);
}

/** A byte count for people: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** A node id shortened for a table: its first 8 characters. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}
