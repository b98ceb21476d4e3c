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
      const { containerWorkload, tempDir } = await import('./fixtures/fixtures.js');
      const rt = new ContainerRuntime({ engine: probe.engine });
      const caps = await rt.provides();
      expect(caps[0]?.id).toMatch(/^runtime\.container\.(docker|podman)$/);
      expect(caps[0]?.provenance).toBe('probed');
      // A short lifecycle with the local image: whatever its entrypoint does with the cog's arguments,
      // the container must be created, run to an exit, give evidence, and be removed.
      const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
      const w = await containerWorkload(probe.image, {
        variants: { [`${arch}-container`]: JSON.stringify({ image: probe.image }) },
        config: {},
      });
      await rt.admit(w);
      const h = await rt.load(w, {
        values: {},
        runMode: { type: 'once' },
        host: { nodeId: 'n', dataDir: tempDir() },
      });
      await rt.start(h);
      const deadline = Date.now() + 20_000;
      while ((await rt.status(h)).state === 'running' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const ev = await rt.stop(h, 2000);
      expect(ev.exitCode === null ? ev.signal : ev.exitCode).not.toBeNull();
      await rt.unload(h);
      expect((await rt.status(h)).state).toBe('unknown');
    },
  );
});
