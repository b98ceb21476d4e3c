import type { WorkloadConfig } from '@heddle/runtime';
import { seedPinWorkload } from '@heddle/seed-adapter';
import { boolFlag, cogRef, keyValuePairs, parseCommandArgs, stringsFlag } from '../args.js';
import { badInput, ExitCode } from '../cli-error.js';
import { openGoverned } from '../governed.js';
import { readInstalled, rememberInstance } from '../installed-file.js';
import { type CliIo, emit } from '../io.js';
import { pinFor } from '../pins-file.js';
import { keyValues } from '../table.js';

/**
 * `heddle-seed run <id>@<version> [--no-start] [--set k=v]...`: loads a pinned cog through the
 * WorkloadHost over `SeedApiRuntime` (admitted against the store, gated, installed only when missing
 * and under the cap, stopped after the Seed's auto-start, read back, chained), then starts it (gated,
 * chained) unless `--no-start`. Refuses a cog that is not pinned at exactly this version
 * (`not_pinned`, exit 3) and a store that drifted from the pin (`admission`, exit 1).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseCommandArgs(args, {
    usage: 'heddle-seed run <id>@<version> [--no-start] [--set k=v]... [--home D] [--json]',
    flags: { 'no-start': 'boolean', set: 'strings' },
    positionals: ['id@version'],
  });
  const { id, version } = cogRef(a.positionals[0] ?? '', 'id@version');
  const values = keyValuePairs(stringsFlag(a, 'set'), 'set');
  const g = await openGoverned(a.home, io);
  try {
    const pin = pinFor(g.pins, id);
    if (pin === undefined) {
      throw badInput(
        'not_pinned',
        `${id} is not pinned (heddle-seed pin add ${id}@${version}); only pinned cogs run`,
        'id',
      );
    }
    if (pin.version !== version) {
      throw badInput('not_pinned', `${id} is pinned at ${pin.version}, not ${version}`, 'version');
    }
    const workload = seedPinWorkload(pin);
    const earlier = readInstalled(g.home).find((h) => h.workloadId === id);
    let handle = earlier;
    if (earlier !== undefined) {
      if (earlier.version !== version) {
        throw badInput(
          'already_loaded',
          `${id}@${earlier.version} is loaded; remove it first (heddle-seed rm ${id})`,
          'id',
        );
      }
      await g.host.adopt(earlier, workload);
    } else {
      const config: WorkloadConfig = {
        values,
        runMode: { type: 'listener' },
        host: { nodeId: g.nodeId, dataDir: '/' },
      };
      handle = await g.host.load(workload, config);
      rememberInstance(g.home, handle);
    }
    if (handle === undefined) throw new Error('unreachable: no handle');
    const started = !boolFlag(a, 'no-start');
    if (started) await g.host.start(handle);
    const st = await g.host.status(handle);
    const value = {
      id,
      version,
      instance_id: handle.instanceId,
      installed_here: handle.storeInstalled === true,
      already_loaded: earlier !== undefined,
      started,
      state: st.state,
    };
    emit(io, a.json, value, () =>
      keyValues([
        ['cog', `${id}@${version}`],
        ['instance', handle.instanceId],
        [
          'installed',
          earlier !== undefined
            ? 'already loaded'
            : handle.storeInstalled === true
              ? 'by heddle-seed'
              : 'already on the Seed (adopted)',
        ],
        ['state', st.state],
      ]),
    );
    return ExitCode.ok;
  } finally {
    await g.close();
  }
}
