// Every chain of a cluster verified after each trial, and held to what was seen before: a chain that
// verifies but lost events it had (truncated, or history rewritten) fails against the last checkpoint.
import { type CheckpointAnchor, verifyChainFile } from '@heddle/chain';

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
          return { name: f.name, ok: true, size: r.size };
        }
        last = `${r.failure?.reason}: ${r.failure?.message}`;
        if (r.failure?.reason !== 'torn_tail') break;
      } catch (err) {
        last = (err as Error).message;
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
