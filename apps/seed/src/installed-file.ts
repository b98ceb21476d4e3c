import { existsSync } from 'node:fs';
import { writeFileAtomic } from '@heddle/envelope';
import type { InstanceHandle } from '@heddle/runtime';
import { z } from 'zod';
import { profilePath } from './home.js';
import { readJsonFile } from './json-file.js';

/**
 * One instance of `installed.json`: the handle `SeedApiRuntime` returned (whose `storeInstalled` says
 * whether this tool installed the cog, and so may uninstall it), or, with `pending: true`, the intent
 * of an install recorded before it was sent: the install may or may not have happened (its answer was
 * lost, or the process died), and `rm` removes whatever it left.
 */
export interface InstalledEntry extends InstanceHandle {
  readonly pending?: true;
}

/**
 * `installed.json`: the instances this tool loaded (or is loading) on the Seed, one per cog id. Every
 * later invocation adopts them from here.
 */
export interface InstalledFile {
  readonly version: 1;
  readonly instances: readonly InstalledEntry[];
}

// An absent key stays absent (never an explicit undefined), as an `InstalledEntry` has it.
const HandleSchema: z.ZodType<InstalledEntry> = z
  .strictObject({
    instanceId: z.string().min(1).max(256),
    runtime: z.string().min(1).max(64),
    workloadId: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
    version: z.string().min(1).max(64),
    storeInstalled: z.boolean().optional(),
    pending: z.literal(true).optional(),
  })
  .transform(
    ({ storeInstalled, pending, ...handle }): InstalledEntry => ({
      ...handle,
      ...(storeInstalled === undefined ? {} : { storeInstalled }),
      ...(pending === undefined ? {} : { pending }),
    }),
  );

/** The handle of an entry (without `pending`). */
export function handleOf(e: InstalledEntry): InstanceHandle {
  const { pending: _pending, ...handle } = e;
  return handle;
}

const InstalledFileSchema: z.ZodType<InstalledFile> = z.strictObject({
  version: z.literal(1),
  instances: z.array(HandleSchema).max(256),
});

/** Reads `installed.json` (no instances when missing); `installed_invalid` (exit 3) when bad. */
export function readInstalled(home: string): InstalledEntry[] {
  const f = readJsonFile(profilePath(home, 'installed'), InstalledFileSchema, 'installed_invalid', true);
  return f === undefined ? [] : [...f.instances];
}

/** Writes `installed.json` atomically (removes nothing else). */
export function writeInstalled(home: string, handles: readonly InstalledEntry[]): void {
  const body: InstalledFile = { version: 1, instances: [...handles] };
  writeFileAtomic(profilePath(home, 'installed'), `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
}

/** Records `handle` (replacing any earlier one of the same cog), durably (written atomically, fsynced). */
export function rememberInstance(home: string, handle: InstalledEntry): void {
  const rest = readInstalled(home).filter((h) => h.workloadId !== handle.workloadId);
  writeInstalled(home, [...rest, handle]);
}

/** Forgets the instance of cog `id` (after an unload). */
export function forgetInstance(home: string, id: string): void {
  if (!existsSync(profilePath(home, 'installed'))) return;
  writeInstalled(
    home,
    readInstalled(home).filter((h) => h.workloadId !== id),
  );
}
