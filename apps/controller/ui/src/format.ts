/** `12s ago`, `3m ago`, `2h ago`, `4d ago`. */
export function ago(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '-';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** The first 12 characters of an id, for tables (the full id is in the title). */
export const short = (id: string | null | undefined): string =>
  id === null || id === undefined ? '-' : id.slice(0, 12);

/** A time of day, `HH:MM:SS` (local). */
export const clock = (ms: number): string => new Date(ms).toLocaleTimeString([], { hour12: false });
