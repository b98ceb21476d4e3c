import { parseSeedArgs } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { LS } from '../command-defs.js';
import { readInstalled } from '../installed-file.js';
import { type CliIo, emit } from '../io.js';
import { pinFor, readPins } from '../pins-file.js';
import { openSession } from '../session.js';
import { table } from '../table.js';

/**
 * `heddle-seed ls`: the cogs installed on the Seed, with whether each is pinned and whether this tool
 * loaded it (and installed it: only those does `rm` uninstall), and the installs this tool recorded
 * (`pending`: sent, answer not recorded), listed even when the Seed does not hold them.
 */
export async function ls(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(LS, args);
  const s = openSession(a.home, io, 'required');
  const pins = readPins(s.home);
  const mine = readInstalled(s.home);
  const installed = await s.client.installed();
  const rows = installed.map((c) => {
    const pin = pinFor(pins, c.id);
    const handle = mine.find((h) => h.workloadId === c.id);
    return {
      id: c.id,
      version: c.version,
      running: c.running,
      pid: c.pid ?? null,
      pinned: pin === undefined ? 'no' : pin.version === c.version ? 'yes' : `other version (${pin.version})`,
      loaded_here: handle !== undefined,
      installed_here: handle?.storeInstalled === true,
      pending: handle?.pending === true,
    };
  });
  // Recorded installs the Seed does not list (their answer was lost, or they never reached it).
  for (const h of mine) {
    if (h.pending !== true || installed.some((c) => c.id === h.workloadId)) continue;
    rows.push({
      id: h.workloadId,
      version: h.version,
      running: false,
      pid: null,
      pinned: pinFor(pins, h.workloadId)?.version === h.version ? 'yes' : 'no',
      loaded_here: true,
      installed_here: true,
      pending: true,
    });
  }
  emit(io, a.json, { installed: rows }, () =>
    table(
      ['ID', 'VERSION', 'STATE', 'PID', 'PINNED', 'MANAGED'],
      rows.map((r) => [
        r.id,
        r.version,
        r.pending && !installed.some((c) => c.id === r.id)
          ? 'not on the Seed'
          : r.running
            ? 'running'
            : 'stopped',
        r.pid === null ? '-' : String(r.pid),
        r.pinned,
        r.pending
          ? 'install recorded (rm removes it)'
          : r.installed_here
            ? 'installed here'
            : r.loaded_here
              ? 'adopted'
              : '-',
      ]),
    ),
  );
  return ExitCode.ok;
}
