import { parseSeedArgs } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { STATUS } from '../command-defs.js';
import { type CliIo, emit } from '../io.js';
import { openSession } from '../session.js';
import { keyValues } from '../table.js';

/**
 * `heddle-seed status`: the Seed's status, identity and pairing state (all readable without a token),
 * and whether this profile holds a token. Fields the Seed does not report show as `-`.
 */
export async function status(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(STATUS, args);
  const s = openSession(a.home, io, 'none');
  const [st, id, pair] = await Promise.all([s.client.status(), s.client.identity(), s.client.pairStatus()]);
  const paired = openSession(a.home, io, 'optional').paired;
  const value = {
    url: s.profile.url,
    spki: s.profile.spki,
    link: s.profile.spki === null ? 'plain_local_link' : 'tls_pinned',
    status: st,
    identity: id,
    pair: pair,
    paired_here: paired,
  };
  emit(io, a.json, value, () =>
    keyValues([
      ['url', s.profile.url],
      [
        'link',
        s.profile.spki === null
          ? 'plain http (local link)'
          : `https, SPKI pinned ${s.profile.spki.slice(0, 16)}…`,
      ],
      ['device', id.device_id],
      ['firmware', id.firmware_version ?? '-'],
      ['uptime', st.uptime_secs === undefined ? '-' : `${st.uptime_secs} s`],
      [
        'pairing window',
        pair.pairing_window_open === undefined
          ? '-'
          : pair.pairing_window_open
            ? `open (${pair.window_remaining_secs ?? '?'} s left)`
            : 'closed',
      ],
      ['paired clients', pair.client_count === undefined ? '-' : String(pair.client_count)],
      ['this profile', paired ? 'paired (token stored)' : 'not paired (run heddle-seed pair)'],
    ]),
  );
  return ExitCode.ok;
}
