// Every chain of a cluster verified after each trial, and held to what was seen before: a chain that
// verifies but lost events it had (truncated, or history rewritten) fails against the last checkpoint.

import { readFileSync } from 'node:fs';
import { type CheckpointAnchor, verifyChainFile } from '@heddle/chain';
import { errorMessage } from '@heddle/cli-kit';
import { ChainKind, canTransition, LIFECYCLE_STATES, type LifecycleState } from '@heddle/model';

const STATES: ReadonlySet<string> = new Set(LIFECYCLE_STATES);

/** True when `x` is one of the lifecycle states. */
function isState(x: unknown): x is LifecycleState {
  return typeof x === 'string' && STATES.has(x);
}

/**
 * Every `workload.lifecycle` record of the chain at `path` whose move the transition table does not
 * allow (an illegal transition is a bug, whichever failure led to it), one line each.
 */
export function illegalTransitions(path: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes(ChainKind.lifecycle)) continue;
    let e: { kind?: unknown; payload?: { from?: unknown; to?: unknown; instance_id?: unknown } };
    try {
      // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
      e = JSON.parse(line) as typeof e;
    } catch {
      continue; // a torn last line: the verification above judges the file
    }
    if (e.kind !== ChainKind.lifecycle) continue;
    const { from, to, instance_id } = e.payload ?? {};
    const legal = isState(from) && isState(to) && canTransition(from, to);
    if (!legal) out.push(`${String(instance_id)}: ${String(from)} -> ${String(to)}`);
  }
  return out;
}

/** A chain file and whose it is. */
export interface ChainFile {
  /** `controller` or `host <n>`. */
  readonly name: string;
  readonly path: string;
}

/** The result of checking one chain. */
export interface ChainCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly size: number;
  /** Why it failed, when it did. */
  readonly problem?: string;
}

/**
 * Verifies chain files and remembers each one's size and head, so the next check also proves that
 * nothing seen before was dropped or rewritten. A torn last record is read again a few times (its
 * writer may be appending right now) before it counts as a failure.
 */
export class ChainWatch {
  readonly #seen = new Map<string, CheckpointAnchor>();

  /** Checks every file; the problems, one line each (empty when all verify). */
  async check(files: readonly ChainFile[]): Promise<ChainCheck[]> {
    const out: ChainCheck[] = [];
    for (const f of files) out.push(await this.#one(f));
    return out;
  }

  async #one(f: ChainFile): Promise<ChainCheck> {
    const before = this.#seen.get(f.path);
    let last = '';
    for (let i = 0; i < 6; i++) {
      try {
        const r = await verifyChainFile(f.path, before === undefined ? {} : { checkpoint: before });
        if (r.ok) {
          this.#seen.set(f.path, { size: r.size, head: r.head });
          const illegal = illegalTransitions(f.path);
          if (illegal.length > 0) {
            return {
              name: f.name,
              ok: false,
              size: r.size,
              problem: `${f.name} chain ${f.path}: illegal lifecycle transitions: ${illegal.slice(0, 5).join('; ')}`,
            };
          }
          return { name: f.name, ok: true, size: r.size };
        }
        last = `${r.failure?.reason}: ${r.failure?.message}`;
        if (r.failure?.reason !== 'torn_tail') break;
      } catch (err) {
        last = errorMessage(err);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      name: f.name,
      ok: false,
      size: before?.size ?? 0,
      problem: `${f.name} chain ${f.path}: ${last}`,
    };
  }
}
