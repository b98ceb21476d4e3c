import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { removeToken, saveToken } from './credentials.js';
import { SeedError } from './errors.js';
import type { PairStatus, SeedApi } from './seed-api.js';

/** Options of {@link pairSeed}. */
export interface PairSeedOptions {
  /** The name this client registers under (shown by the Seed). */
  readonly clientName: string;
  /** Where to save the token (owner-only, 0600). */
  readonly tokenPath: string;
  /** Ask the Seed to open a pairing window when none is open (the Seed may refuse: `seed_error`). */
  readonly openWindow?: boolean;
}

/** What {@link pairSeed} returns. The token itself is only in the token file. */
export interface PairSeedResult {
  readonly paired: true;
  /** The pairing window as read before pairing. */
  readonly window: PairStatus;
}

/** What {@link unpairSeed} returns. */
export interface UnpairSeedResult {
  /** Whether a token file was there and was removed. */
  readonly removed: boolean;
}

/**
 * Pairs with a Seed: reads the pairing status, opens a window when none is open and `openWindow` is
 * set (else refuses with `not_paired`: press the Seed's pairing button first), pairs as `clientName`,
 * and saves the token to `tokenPath` (0600). The token is never returned nor put in any message. The
 * token file's directory is created before pairing so that a token the Seed issued is not lost.
 */
export async function pairSeed(client: SeedApi, options: PairSeedOptions): Promise<PairSeedResult> {
  try {
    mkdirSync(dirname(options.tokenPath), { recursive: true, mode: 0o700 });
  } catch {
    throw new SeedError('credentials', `cannot create the directory of ${options.tokenPath}`, {
      field: 'tokenPath',
    });
  }
  let window = await client.pairStatus();
  // A Seed that does not say whether a window is open is asked to pair anyway: it refuses if none is.
  if (window.pairing_window_open === false) {
    if (options.openWindow !== true) {
      throw new SeedError(
        'not_paired',
        "the Seed's pairing window is closed: open it (the Seed's button, or openWindow) and retry",
      );
    }
    await client.openPairWindow();
    window = await client.pairStatus();
    if (window.pairing_window_open === false) {
      throw new SeedError('seed_error', 'the Seed did not open a pairing window');
    }
  }
  const token = await client.pair(options.clientName);
  saveToken(options.tokenPath, token);
  return { paired: true, window };
}

/**
 * Forgets a pairing on this side: removes the token file. (The Seed keeps its client entry until it is
 * revoked on the Seed itself.)
 */
export function unpairSeed(tokenPath: string): UnpairSeedResult {
  return { removed: removeToken(tokenPath) };
}
