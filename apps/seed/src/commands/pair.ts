import { openChainFile } from '@heddle/chain';
import { pairSeed, unpairSeed } from '@heddle/seed-adapter';
import { parseSeedArgs } from '../args.js';
import { badInput, ExitCode } from '../cli-error.js';
import { PAIR, UNPAIR } from '../command-defs.js';
import { chainRecord } from '../governed.js';
import { profilePath } from '../home.js';
import { type CliIo, emit } from '../io.js';
import { openSession } from '../session.js';

async function record(home: string, kind: string, payload: Record<string, string | boolean>): Promise<void> {
  const chain = await openChainFile(profilePath(home, 'chain'));
  try {
    await chainRecord(chain, kind, payload);
  } finally {
    await chain.close();
  }
}

/**
 * `heddle-seed pair [--open-window] [--client-name N]`: pairs during the Seed's pairing window (or asks
 * it to open one with `--open-window`) and stores the token in the profile (0600). The token is never
 * printed; the pairing is chained (`seed.pair`, without the token).
 */
export async function pair(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(PAIR, args);
  const s = openSession(a.home, io, 'none');
  const clientName = a.strings['client-name'] ?? s.profile.client_name;
  if (!/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/.test(clientName)) {
    throw badInput(
      'invalid_argument',
      '--client-name: expected 1..64 letters, digits, space, . _ -',
      'client-name',
    );
  }
  const tokenPath = profilePath(s.home, 'token');
  const r = await pairSeed(s.client, {
    clientName,
    tokenPath,
    openWindow: a.booleans['open-window'] === true,
  });
  await record(s.home, 'seed.pair', { url: s.profile.url, client_name: clientName });
  emit(io, a.json, { paired: true, client_name: clientName, token_file: tokenPath, window: r.window }, () => [
    `paired with ${s.profile.url} as ${JSON.stringify(clientName)}`,
    `token stored in ${tokenPath} (mode 0600; never printed)`,
  ]);
  return ExitCode.ok;
}

/**
 * `heddle-seed unpair`: deletes the token file (the Seed keeps its client entry until revoked on the
 * Seed). Chained as `seed.unpair`.
 */
export async function unpair(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(UNPAIR, args);
  const s = openSession(a.home, io, 'none');
  const r = unpairSeed(profilePath(s.home, 'token'));
  if (r.removed) await record(s.home, 'seed.unpair', { url: s.profile.url });
  emit(io, a.json, { removed: r.removed }, () => [
    r.removed
      ? 'token removed (revoke the client on the Seed itself to end the pairing there)'
      : 'no token to remove (not paired)',
  ]);
  return ExitCode.ok;
}
