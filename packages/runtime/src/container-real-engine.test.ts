import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findEngineOnPath } from './container-engine.js';

/**
 * Decides whether a real engine can run a container here, without touching the network: an engine on
 * PATH whose daemon answers, an image already present locally, and `run --rm` of it finishing in time.
 */
function probeRealEngine(): { engine: string; image: string } | { skip: string } {
  const engine = findEngineOnPath();
  if (engine === undefined) return { skip: 'no docker or podman on PATH' };
  const v = spawnSync(engine, ['version', '--format', 'json'], { encoding: 'utf8', timeout: 5000 });
  if (v.status !== 0)
    return {
      skip: `${engine} is installed but its daemon does not answer (${v.stderr.trim().split('\n')[0] ?? ''})`,
    };
  const imgs = spawnSync(engine, ['images', '--format', '{{.Repository}}@{{.Digest}}'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  const image = imgs.stdout.split('\n').find((l) => /@sha256:[0-9a-f]{64}$/.test(l));
  if (image === undefined)
    return { skip: `${engine} has no local image pinned by digest (no network to pull one)` };
  const run = spawnSync(engine, ['run', '--rm', '--network', 'none', image, 'true'], {
    encoding: 'utf8',
    timeout: 8000,
  });
  if (run.status !== 0)
    return {
      skip: `${engine} cannot start a container here (${run.stderr.trim().split('\n')[0] ?? 'timeout'})`,
    };
  return { engine, image };
}

const probe = probeRealEngine();
const reason = 'skip' in probe ? probe.skip : '';
if (reason !== '') console.log(`container real-engine test skipped: ${reason}`);

describe('ContainerRuntime against a real engine', () => {
  it.skipIf(reason !== '')(
    `runs a short lifecycle with the real engine${reason === '' ? '' : ` (skipped: ${reason})`}`,
    async () => {
      if ('skip' in probe) return;
      const { ContainerRuntime } = await import('./container-runtime.js');
      const rt = new ContainerRuntime({ engine: probe.engine });
      const caps = await rt.provides();
      expect(caps[0]?.id).toMatch(/^runtime\.container\.(docker|podman)$/);
      expect(caps[0]?.provenance).toBe('probed');
    },
  );
});
