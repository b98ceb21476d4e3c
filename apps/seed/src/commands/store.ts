import { storeEntryMatchesPin } from '@heddle/package';
import type { StoreCog } from '@heddle/seed-adapter';
import { SEED_REGISTRY, type SeedPin } from '@heddle/seed-adapter';
import { parseSeedArgs } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { STORE } from '../command-defs.js';
import { type CliIo, emit } from '../io.js';
import { pinFor, readPins } from '../pins-file.js';
import { openSession } from '../session.js';
import { table } from '../table.js';

/** How a store entry stands against the operator's pins. */
export type PinState = 'pinned' | 'drift' | 'sha_mismatch' | 'unpinned';

/** Compares a store entry with its pin: exact match, another version (drift), another digest, or none. */
export function pinState(pin: SeedPin | undefined, cog: StoreCog): PinState {
  if (pin === undefined) return 'unpinned';
  const storePin = {
    registry: SEED_REGISTRY,
    id: pin.id,
    version: pin.version,
    ...(pin.sha256 === undefined ? {} : { sha256: pin.sha256 }),
  };
  if (storeEntryMatchesPin(storePin, cog)) return 'pinned';
  return cog.version !== pin.version ? 'drift' : 'sha_mismatch';
}

/**
 * `heddle-seed store`: the store catalog, each cog marked `pinned` (the store has exactly the pinned
 * version and digest), `drift` (the store lists another version than the pin: `run` refuses it),
 * `sha_mismatch`, or `unpinned`. Pins whose cog the store does not list are reported too.
 */
export async function store(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(STORE, args);
  const s = openSession(a.home, io, 'optional');
  const pins = readPins(s.home);
  const cogs = await s.client.available();
  const rows = cogs.map((c) => {
    const pin = pinFor(pins, c.id);
    return { ...c, pin: pinState(pin, c), pinned_version: pin?.version ?? null };
  });
  const missing = pins
    .filter((p) => !cogs.some((c) => c.id === p.id))
    .map((p) => ({ id: p.id, version: p.version }));
  emit(io, a.json, { cogs: rows, pinned_not_in_store: missing }, () => [
    ...table(
      ['ID', 'VERSION', 'SIZE', 'PIN', 'PINNED', 'SHA256'],
      rows.map((r) => [
        r.id,
        r.version,
        r.size === undefined ? '-' : String(r.size),
        r.pin,
        r.pinned_version ?? '-',
        r.sha256 === undefined ? '-' : `${r.sha256.slice(0, 12)}…`,
      ]),
    ),
    ...missing.map((m) => `pinned but not in the store: ${m.id}@${m.version}`),
  ]);
  return ExitCode.ok;
}
