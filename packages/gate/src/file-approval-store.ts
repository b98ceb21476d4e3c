import {
  errnoCode,
  errorMessage,
  HeddleError,
  parseJson,
  readTextBounded,
  writeFileAtomic,
} from '@heddle/envelope';
import { z } from 'zod';
import { type ApprovalRequest, ApprovalRequestSchema, type ApprovalStore, byAge } from './approval-store.js';
import { GateError, ValidationError } from './errors.js';
import { zodIssues } from './issues.js';

/** The on-disk format of {@link FileApprovalStore}. */
export interface ApprovalFile {
  /** Format version, 1. */
  readonly version: 1;
  /** Every request, oldest first. */
  readonly requests: readonly ApprovalRequest[];
}

/** Schema of an approval store file. */
export const ApprovalFileSchema: z.ZodType<ApprovalFile> = z.strictObject({
  version: z.literal(1),
  requests: z.array(ApprovalRequestSchema).max(100_000, 'more than 100000 requests'),
});

/** Largest approval store file read, in bytes. */
export const MAX_APPROVAL_FILE_BYTES: number = 64 * 1024 * 1024;

/**
 * A crash-safe approval store in one JSON file (mode 0600). Every `put` and `remove` rewrites the
 * file with `writeFileAtomic` (temporary file, fsync, rename, fsync of the directory), so a crash
 * leaves either the old or the new content. The file is re-read on every call, so an operator's
 * `approve` in another process is seen by a waiting check that polls (see `ApprovalQueue`'s
 * `pollMs`). Two processes writing at the same instant may lose one update: use one writer per file.
 * A missing file is an empty store; a corrupt one is refused with `approval_store_corrupt`.
 */
export class FileApprovalStore implements ApprovalStore {
  /** The file path. */
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** See {@link ApprovalStore.get}. */
  async get(id: string): Promise<ApprovalRequest | undefined> {
    return this.read().find((r) => r.id === id);
  }

  /** See {@link ApprovalStore.put}. */
  async put(request: ApprovalRequest): Promise<void> {
    const all = this.read().filter((r) => r.id !== request.id);
    all.push(request);
    this.write(all);
  }

  /** See {@link ApprovalStore.list}. */
  async list(): Promise<ApprovalRequest[]> {
    return this.read();
  }

  /** See {@link ApprovalStore.remove}. */
  async remove(ids: readonly string[]): Promise<void> {
    const drop = new Set(ids);
    const all = this.read();
    const kept = all.filter((r) => !drop.has(r.id));
    if (kept.length !== all.length) this.write(kept);
  }

  private read(): ApprovalRequest[] {
    let text: string;
    try {
      text = readTextBounded(this.path, MAX_APPROVAL_FILE_BYTES);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return [];
      throw new GateError('approval_store_unreadable', `cannot read ${this.path}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    let value: unknown;
    try {
      value = parseJson(text, { integersOnly: false, maxBytes: MAX_APPROVAL_FILE_BYTES });
    } catch (err) {
      const field = err instanceof HeddleError ? (err.field ?? '$') : '$';
      throw new ValidationError('approval_store_corrupt', `approval store ${this.path}`, [
        { field, message: errorMessage(err) },
      ]);
    }
    const r = ApprovalFileSchema.safeParse(value);
    if (!r.success) {
      throw new ValidationError('approval_store_corrupt', `approval store ${this.path}`, zodIssues(r.error));
    }
    return [...r.data.requests].sort(byAge);
  }

  private write(requests: ApprovalRequest[]): void {
    const body: ApprovalFile = { version: 1, requests: requests.sort(byAge) };
    writeFileAtomic(this.path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  }
}
