/** The fields of `inspect` output the container adapter relies on (docker and podman agree on these). */
export interface ContainerInspect {
  /** Container name without the leading `/`. */
  readonly name: string;
  /** `State.Status`: `created`, `running`, `paused`, `restarting`, `removing`, `exited`, `dead`. */
  readonly status: string;
  readonly running: boolean;
  /** `State.Pid` (0 when not running). */
  readonly pid: number;
  /** `State.ExitCode`. */
  readonly exitCode: number;
  /** `State.OOMKilled`: the kernel's OOM killer ended it (memory limit exceeded). */
  readonly oomKilled: boolean;
  /** `State.StartedAt` / `State.FinishedAt` as Unix ms, null for the zero time (`0001-01-01...`). */
  readonly startedAtMs: number | null;
  readonly finishedAtMs: number | null;
  /** `Config.Image`: the reference the container was created from. */
  readonly image: string;
  /** `Config.Labels`. */
  readonly labels: Readonly<Record<string, string>>;
}

/** One row of `ps -a --format json`. */
export interface ContainerPsRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Parses JSON output that is either one JSON value (an array or an object) or JSON lines. */
export function parseJsonRecords(text: string): Record<string, unknown>[] {
  const t = text.trim();
  if (t === '') return [];
  const asRecords = (v: unknown): Record<string, unknown>[] =>
    (Array.isArray(v) ? v : [v]).filter(isJsonObject);
  try {
    return asRecords(JSON.parse(t));
  } catch {
    const out: Record<string, unknown>[] = [];
    for (const line of t.split('\n')) {
      if (line.trim() === '') continue;
      try {
        out.push(...asRecords(JSON.parse(line)));
      } catch {
        // A line that is not JSON (a warning) is skipped.
      }
    }
    return out;
  }
}

/** Whether `v` is a JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `v` when it is a JSON object, else an empty one. */
export function jsonObject(v: unknown): Record<string, unknown> {
  return isJsonObject(v) ? v : {};
}

/** An engine timestamp (RFC 3339, nanoseconds allowed) as Unix ms; null for the zero time or garbage. */
export function engineTimeMs(v: unknown): number | null {
  if (typeof v !== 'string' || v === '' || v.startsWith('0001-01-01')) return null;
  const ms = Date.parse(v.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(ms) ? null : ms;
}

function labelsOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v === 'string') {
    // docker ps: "k=v,k2=v2"
    for (const part of v.split(',')) {
      const eq = part.indexOf('=');
      if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1);
    }
  } else {
    for (const [k, val] of Object.entries(jsonObject(v))) if (typeof val === 'string') out[k] = val;
  }
  return out;
}

/** Parses `inspect` output; the first container in it, or undefined when there is none. */
export function parseInspect(text: string): ContainerInspect | undefined {
  const rec = parseJsonRecords(text)[0];
  if (rec === undefined) return undefined;
  const state = jsonObject(rec.State);
  const config = jsonObject(rec.Config);
  const name = typeof rec.Name === 'string' ? rec.Name.replace(/^\//, '') : '';
  return {
    name,
    status: typeof state.Status === 'string' ? state.Status : 'unknown',
    running: state.Running === true,
    pid: typeof state.Pid === 'number' ? state.Pid : 0,
    exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : 0,
    oomKilled: state.OOMKilled === true,
    startedAtMs: engineTimeMs(state.StartedAt),
    finishedAtMs: engineTimeMs(state.FinishedAt),
    image: typeof config.Image === 'string' ? config.Image : '',
    labels: labelsOf(config.Labels),
  };
}

/**
 * Parses `ps -a --format json`: docker prints JSON lines with `ID`, `Names` (a string), `State`,
 * `Labels` (`k=v,...`); podman prints an array with `Id`, `Names` (an array), `State`, `Labels` (an object).
 */
export function parsePs(text: string): ContainerPsRow[] {
  return parseJsonRecords(text).map((r) => {
    const names = Array.isArray(r.Names) ? r.Names : [r.Names];
    const first = names.find((n): n is string => typeof n === 'string') ?? '';
    const id = typeof r.ID === 'string' ? r.ID : typeof r.Id === 'string' ? r.Id : '';
    return {
      id,
      name: first.split(',')[0]?.replace(/^\//, '') ?? '',
      state: typeof r.State === 'string' ? r.State.toLowerCase() : 'unknown',
      labels: labelsOf(r.Labels),
    };
  });
}

/** Exit code to signal name, for the `128 + n` convention of container engines (137 = SIGKILL). */
export function signalOfExitCode(code: number): string | null {
  switch (code) {
    case 137:
      return 'SIGKILL';
    case 143:
      return 'SIGTERM';
    case 130:
      return 'SIGINT';
    case 134:
      return 'SIGABRT';
    default:
      return null;
  }
}

/**
 * Parses `logs --timestamps` output of both streams into lines ordered by timestamp, each without its
 * timestamp prefix (the engine prefixes RFC 3339 nanosecond timestamps, which sort as text).
 */
export function mergeTimestampedLogs(stdout: string, stderr: string): string[] {
  const rows: { t: string; i: number; line: string }[] = [];
  let i = 0;
  for (const text of [stdout, stderr]) {
    for (const raw of text.split('\n')) {
      if (raw === '') continue;
      const sp = raw.indexOf(' ');
      const ts = sp > 0 ? raw.slice(0, sp) : '';
      const ok = /^\d{4}-\d\d-\d\dT/.test(ts);
      rows.push({ t: ok ? ts : '', i: i++, line: ok ? raw.slice(sp + 1) : raw });
    }
  }
  rows.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.i - b.i));
  return rows.map((r) => r.line);
}

/** Removes the timestamp prefix of each line of `logs --timestamps` output. */
export function stripLogTimestamps(text: string): string {
  return text.replace(/^\d{4}-\d\d-\d\dT\S+ /gm, '');
}
