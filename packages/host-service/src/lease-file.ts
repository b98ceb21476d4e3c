import { readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { z } from 'zod';

/** The file, in the host's data dir, that remembers when a controller was last heard from. */
export const LEASE_FILE = 'lease.json';

/** The lease time is written again once it moved on by at least this much (at most one write a second). */
const WRITE_EVERY_MS = 1000;

const LeaseFileSchema = z.object({ heard_ms: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) });

/**
 * The durable memory of a host's controller lease (docs/host.md, "Supervision and the controller
 * lease"): when a controller was last heard from, so that a restarted host resumes its lease from that
 * time rather than from its start-up. Without it, a host restarted while cut off from its controller
 * would run its instances for a whole new lease, past the time its controller counts on before it
 * places them elsewhere (docs/lifecycle.md, "At most once, with a lease").
 *
 * The time written is always one the lease really reached, and at most a second old: a restart can
 * only make the lease end earlier than it would have, never later.
 */
export class LeaseFile {
  readonly path: string;
  #writtenMs: number | undefined;
  readonly #onError: (err: unknown) => void;

  constructor(path: string, onError: (err: unknown) => void = () => {}) {
    this.path = path;
    this.#onError = onError;
  }

  /**
   * The time a controller was last heard from, as remembered, capped at `nowMs` (a clock that went
   * back); undefined when the file does not exist (a first start) or cannot be read or parsed.
   */
  read(nowMs: number): number | undefined {
    let text: string;
    try {
      text = readTextBounded(this.path, 4096);
    } catch {
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const r = LeaseFileSchema.safeParse(parsed);
    if (!r.success) return undefined;
    this.#writtenMs = r.data.heard_ms;
    return Math.min(r.data.heard_ms, nowMs);
  }

  /**
   * Remembers `heardMs` when it is at least a second past what the file holds (crash-safe write). A
   * write that fails is reported to `onError`; the lease goes on in memory.
   */
  heard(heardMs: number): void {
    if (this.#writtenMs !== undefined && heardMs < this.#writtenMs + WRITE_EVERY_MS) return;
    this.write(heardMs);
  }

  /** Writes `heardMs` now (also at shutdown). */
  write(heardMs: number): void {
    if (this.#writtenMs === heardMs) return;
    try {
      writeFileAtomic(this.path, `${JSON.stringify({ heard_ms: heardMs })}\n`, { mode: 0o600 });
      this.#writtenMs = heardMs;
    } catch (err) {
      this.#onError(err);
    }
  }
}
