import type { JsonValue } from '@heddle/envelope';
import type { Admission, RunEvidence } from '../contract.js';
import { redactSecrets } from './host-redact.js';

/**
 * Bounds on what the WorkloadHost chains, so that one event stays small whatever an adapter or a
 * process produced: output tails in UTF-8 bytes, list lengths, and characters per string.
 */
export const AUDIT_LIMITS: {
  /** Bytes of each output tail (stdout, stderr) kept in a chained evidence. */
  readonly outputBytes: 4096;
  /** Entries of a list (argv, notes, preempted ids). */
  readonly listEntries: 64;
  /** Characters of a short string (ids, argv entries, notes). */
  readonly shortText: 512;
  /** Characters of a reason (an error message). */
  readonly reasonText: 2048;
  /** Depth of a caller-given JSON value (`forced_by_revocation`). */
  readonly jsonDepth: 8;
} = { outputBytes: 4096, listEntries: 64, shortText: 512, reasonText: 2048, jsonDepth: 8 };

/**
 * A string as it may be chained: secrets removed first (so bounding cannot leave a piece of one
 * behind that redaction would have caught whole), then cut to `max` characters (`...` marks a cut),
 * then made well-formed (a lone surrogate cannot be canonicalised).
 */
export function auditText(text: string, max: number, secrets: readonly string[] = []): string {
  const s = redactSecrets(text, secrets);
  const cut = s.length > max ? `${s.slice(0, max)}...` : s;
  return cut.toWellFormed();
}

/** A list of strings as it may be chained (at most `AUDIT_LIMITS.listEntries`, each bounded). */
export function auditList(items: readonly string[], secrets: readonly string[] = []): string[] {
  return items
    .slice(0, AUDIT_LIMITS.listEntries)
    .map((s) => auditText(String(s), AUDIT_LIMITS.shortText, secrets));
}

/** A number as canonical JSON holds it: a safe integer (truncated) or null. */
export function auditInt(n: number | null | undefined): number | null {
  if (typeof n !== 'number' || !Number.isFinite(n)) return null;
  const t = Math.trunc(n);
  return Number.isSafeInteger(t) ? t : null;
}

/**
 * The last `maxBytes` UTF-8 bytes of `text` (never starting inside a character), and how many bytes
 * were dropped from the front.
 */
export function utf8Tail(text: string, maxBytes: number): { text: string; dropped: number } {
  const buf = Buffer.from(text.toWellFormed(), 'utf8');
  if (buf.length <= maxBytes) return { text: buf.toString('utf8'), dropped: 0 };
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf.readUInt8(start) & 0xc0) === 0x80) start++;
  return { text: buf.subarray(start).toString('utf8'), dropped: start };
}

/**
 * Run evidence as it is chained: snake_case, integers only, secrets redacted, each output tail cut
 * to `AUDIT_LIMITS.outputBytes` with the dropped bytes added to its `*_truncated_bytes`.
 */
export function evidenceForAudit(
  ev: RunEvidence,
  secrets: readonly string[] = [],
): { [k: string]: JsonValue } {
  const out = utf8Tail(redactSecrets(ev.stdout, secrets), AUDIT_LIMITS.outputBytes);
  const err = utf8Tail(redactSecrets(ev.stderr, secrets), AUDIT_LIMITS.outputBytes);
  const json: { [k: string]: JsonValue } = {
    instance_id: auditText(ev.instanceId, AUDIT_LIMITS.shortText, secrets),
    args: auditList(ev.args, secrets),
    exit_code: auditInt(ev.exitCode),
    signal: ev.signal === null ? null : auditText(ev.signal, 32, secrets),
    started_at_ms: auditInt(ev.startedAtMs),
    ended_at_ms: auditInt(ev.endedAtMs),
    killed: ev.killed === true,
    stdout: out.text,
    stdout_truncated_bytes: (auditInt(ev.stdoutTruncatedBytes) ?? 0) + out.dropped,
    stderr: err.text,
    stderr_truncated_bytes: (auditInt(ev.stderrTruncatedBytes) ?? 0) + err.dropped,
    notes: auditList(ev.notes, secrets),
  };
  if (ev.stoppedForConsole !== undefined) json.stopped_for_console = auditList(ev.stoppedForConsole, secrets);
  return json;
}

/** Run evidence as the host returns it to its caller: the same values, secrets redacted. */
export function redactEvidence(ev: RunEvidence, secrets: readonly string[]): RunEvidence {
  if (secrets.length === 0) return ev;
  const r = (s: string): string => redactSecrets(s, secrets);
  return {
    ...ev,
    args: ev.args.map(r),
    stdout: r(ev.stdout),
    stderr: r(ev.stderr),
    notes: ev.notes.map(r),
  };
}

/** An adapter's admission as it is chained. */
export function admissionForAudit(a: Admission, secrets: readonly string[] = []): { [k: string]: JsonValue } {
  const t = (s: string): string => auditText(String(s), AUDIT_LIMITS.shortText, secrets);
  return {
    runtime: t(a.runtime),
    variant: t(a.variant),
    arch: t(a.arch),
    emulated: a.emulated === true,
    notes: auditList(a.notes, secrets),
  };
}

/**
 * A caller-given value (the `why` of a revocation teardown) made safe to chain: strings bounded and
 * redacted, numbers that are not safe integers written as strings, depth, list and key counts
 * bounded, anything that is not JSON written as its type name.
 */
export function auditJson(value: unknown, secrets: readonly string[] = [], depth = 0): JsonValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'string') return auditText(value, AUDIT_LIMITS.reasonText, secrets);
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : String(value);
  if (typeof value !== 'object' || depth >= AUDIT_LIMITS.jsonDepth) return `(${typeof value})`;
  if (Array.isArray(value)) {
    return value.slice(0, AUDIT_LIMITS.listEntries).map((v) => auditJson(v, secrets, depth + 1));
  }
  const out: { [k: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(value).slice(0, AUDIT_LIMITS.listEntries)) {
    if (v === undefined) continue;
    out[auditText(k, 128, secrets)] = auditJson(v, secrets, depth + 1);
  }
  return out;
}
