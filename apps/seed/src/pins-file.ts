import { errorMessage } from '@heddle/cli-kit';
import { HeddleError, writeFileAtomic } from '@heddle/envelope';
import { parseSeedPins, type SeedPin } from '@heddle/seed-adapter';
import { z } from 'zod';
import { badInput } from './cli-error.js';
import { profilePath } from './home.js';
import { readJsonFile } from './json-file.js';

/**
 * Reads `pins.json` of the profile (empty when missing), parsed with the adapter's `parseSeedPins`;
 * `pins_invalid` (exit 3) naming the field when bad.
 */
export function readPins(home: string): SeedPin[] {
  const path = profilePath(home, 'pins');
  const raw = readJsonFile(path, z.unknown(), 'pins_invalid', true);
  if (raw === undefined) return [];
  try {
    return parseSeedPins(raw);
  } catch (err) {
    throw badInput(
      'pins_invalid',
      `${path}: ${errorMessage(err)}`,
      err instanceof HeddleError ? err.field : undefined,
      err,
    );
  }
}

/** Validates (as {@link readPins} would read them) and writes `pins.json` atomically. */
export function writePins(home: string, pins: readonly SeedPin[]): void {
  let parsed: SeedPin[];
  try {
    parsed = parseSeedPins(pins);
  } catch (err) {
    throw badInput(
      'pins_invalid',
      `pin: ${errorMessage(err)}`,
      err instanceof HeddleError ? err.field : undefined,
      err,
    );
  }
  writeFileAtomic(profilePath(home, 'pins'), `${JSON.stringify(parsed, null, 2)}\n`, { mode: 0o644 });
}

/** The pin of cog `id`, or undefined. */
export function pinFor(pins: readonly SeedPin[], id: string): SeedPin | undefined {
  return pins.find((p) => p.id === id);
}
