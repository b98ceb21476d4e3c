import { positional } from '@heddle/cli-kit';
import { deriveInstanceId, type InstanceHandle, type WorkloadConfig } from '@heddle/runtime';
import {
  SEED_RUNTIME_ID,
  SeedInstallUnsureError,
  SeedStrandedInstallError,
  seedPinWorkload,
} from '@heddle/seed-adapter';
import { cogRef, keyValuePairs, parseSeedArgs } from '../args.js';
import { badInput, ExitCode } from '../cli-error.js';
import { RUN } from '../command-defs.js';
import { type Governed, openGoverned } from '../governed.js';
import { forgetInstance, handleOf, readInstalled, rememberInstance } from '../installed-file.js';
import { type CliIo, emit } from '../io.js';
import { pinFor } from '../pins-file.js';
import { keyValues } from '../table.js';

/**
 * `heddle-seed run <id>@<version> [--no-start] [--set k=v]...`: loads a pinned cog through the
 * WorkloadHost over `SeedApiRuntime` (admitted against the store, gated, installed only when missing
 * and under the cap, stopped after the Seed's auto-start, read back, chained), then starts it (gated,
 * chained) unless `--no-start`. Before an install is sent, its intent is written to `installed.json`
 * (`pending`), so that an install whose answer is lost (or a process that dies) leaves a record `rm`
 * can act on. Refuses a cog that is not pinned at exactly this version (`not_pinned`, exit 3) and a
 * store that drifted from the pin (`admission`, exit 1).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(RUN, args);
  const { id, version } = cogRef(positional(a, 0), 'id@version');
  const values = keyValuePairs(a.lists.set ?? [], 'set');
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
    if (earlier !== undefined && earlier.version !== version) {
      throw badInput(
        'already_loaded',
        `${id}@${earlier.version} is loaded; remove it first (heddle-seed rm ${id})`,
        'id',
      );
    }
    const onSeed = (await g.client.installed()).find((c) => c.id === id);
    let handle: InstanceHandle;
    if (earlier !== undefined && (earlier.pending !== true || onSeed?.version === version)) {
      // Loaded before (or a recorded install that did happen): re-attach.
      handle = handleOf(earlier);
      await g.host.adopt(handle, workload);
      if (earlier.pending === true) rememberInstance(g.home, handle);
    } else {
      handle = await load(g, workload, values, onSeed === undefined);
    }
    const started = a.booleans['no-start'] !== true;
    if (started) await g.host.start(handle);
    const st = await g.host.status(handle);
    const again = earlier !== undefined && earlier.pending !== true;
    const value = {
      id,
      version,
      instance_id: handle.instanceId,
      installed_here: handle.storeInstalled === true,
      already_loaded: again,
      started,
      state: st.state,
    };
    emit(io, a.json, value, () =>
      keyValues([
        ['cog', `${id}@${version}`],
        ['instance', handle.instanceId],
        [
          'installed',
          again
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

/**
 * Loads the cog through the host. When the Seed does not hold it (the load installs it), the intent is
 * recorded first (`pending`, `storeInstalled`); after a failed load the record stays only if the Seed
 * now lists the cog (something was installed: `rm` removes it), and the error says so.
 */
async function load(
  g: Governed,
  workload: ReturnType<typeof seedPinWorkload>,
  values: WorkloadConfig['values'],
  installs: boolean,
): Promise<InstanceHandle> {
  const config: WorkloadConfig = {
    values,
    runMode: { type: 'listener' },
    host: { nodeId: g.nodeId, dataDir: '/' },
  };
  if (installs) {
    const instanceId = deriveInstanceId(workload.id, workload.ref, values, config.runMode, g.nodeId);
    rememberInstance(g.home, {
      instanceId,
      runtime: SEED_RUNTIME_ID,
      workloadId: workload.id,
      version: workload.version,
      storeInstalled: true,
      pending: true,
    });
  }
  let handle: InstanceHandle;
  try {
    handle = await g.host.load(workload, config);
  } catch (err) {
    if (!installs) throw err;
    // An install without a clear outcome may still land: keep its record. Otherwise keep it only when
    // the Seed lists the cog (something was installed and not undone).
    const unsure = err instanceof SeedInstallUnsureError || err instanceof SeedStrandedInstallError;
    const left =
      unsure ||
      (await g.client.installed().then(
        (list) => list.some((c) => c.id === workload.id),
        () => true, // cannot tell: keep the record
      ));
    if (!left) {
      forgetInstance(g.home, workload.id);
      throw err;
    }
    if (err instanceof Error) {
      err.message = `${err.message}. The install is recorded in installed.json: heddle-seed rm ${workload.id} removes it`;
    }
    throw err;
  }
  rememberInstance(g.home, handle);
  return handle;
}
