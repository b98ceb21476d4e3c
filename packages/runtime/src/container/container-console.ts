import type { RunEvidence } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { type ContainerCreateSpec, containerCreateArgs, containerCreateEnv } from './container-args.js';
import { type ContainerEngine, runEngine, runEngineOk } from './container-engine.js';
import { type ContainerEvidenceLimits, containerEvidence, inspectContainer } from './container-evidence.js';
import type { ContainerEntry } from './container-instance.js';

/**
 * Runs one (already checked) console command in a fresh container `<name>-console` of the same image
 * and isolation, as `--console <command>` (two arguments, as the cog convention has it) plus the instance's config arguments, waits for it at most
 * `timeoutMs` (then `kill`, noted `timeout`), and removes it. Refused (`runtime`) for an adopted
 * container, whose create spec this process does not have.
 */
export async function runContainerConsole(
  engine: ContainerEngine,
  e: ContainerEntry,
  command: string,
  timeoutMs: number,
  limits: ContainerEvidenceLimits,
): Promise<RunEvidence> {
  if (e.spec === undefined)
    throw new RuntimeError(
      'runtime',
      `instance ${e.handle.instanceId}: console needs a container loaded by this process (adopted)`,
      { field: 'instanceId' },
    );
  const name = `${e.name}-console`;
  // The entry's command is the run-mode argument (`--once`, none for a listener), then the config arguments.
  const configArgs = e.command[0] === '--once' ? e.command.slice(1) : e.command;
  const cmd = ['--console', command, ...configArgs];
  const spec: ContainerCreateSpec = {
    ...e.spec,
    name,
    command: cmd,
    labels: { ...e.spec.labels, 'heddle.console': command },
  };
  await runEngine(engine, ['rm', '-f', name]);
  try {
    await runEngineOk(engine, containerCreateArgs(spec), { env: containerCreateEnv(spec.host) });
    await runEngineOk(engine, ['start', name]);
    const w = await runEngine(engine, ['wait', name], { timeoutMs });
    let killed = false;
    if (w.code !== 0) {
      await runEngine(engine, ['kill', name]);
      killed = true;
    }
    const ins = await inspectContainer(engine, name);
    const ev = await containerEvidence(engine, name, e.handle.instanceId, ins, [e.image, ...cmd], limits);
    return killed ? { ...ev, killed, notes: [...ev.notes, 'timeout'] } : ev;
  } finally {
    await runEngine(engine, ['rm', '-f', name]);
  }
}
