import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WorkloadConfig } from '../workload.js';
import { ContainerRuntime } from './container-runtime.js';
import { containerWorkload, digest, fakeEnginePath, fakeEngineState, tempDir } from './fixtures/fixtures.js';

const IMAGE = `registry.example/acme/ctr-cog@${digest('a')}`;

function setup() {
  const fake = fakeEngineState();
  return { fake, rt: new ContainerRuntime({ engine: fakeEnginePath(), engineEnv: fake.env }) };
}

function config(): WorkloadConfig {
  return {
    values: {},
    runMode: { type: 'listener' },
    host: { nodeId: 'node-1', dataDir: tempDir('heddle-ctr-data-') },
  };
}

describe('ContainerRuntime security checks', { timeout: 60_000 }, () => {
  it('refuses an image-reference file changed after verification (BLAKE3 re-hash)', async () => {
    const { rt } = setup();
    const w = await containerWorkload(IMAGE);
    if (w.source.type !== 'package') throw new Error('expected a package');
    const file = w.source.verified.files.find((f) => f.path.startsWith('images/'));
    if (file === undefined) throw new Error('no image file');
    writeFileSync(file.absolutePath, JSON.stringify({ image: `evil.example/x@${digest('b')}` }));
    await expect(rt.admit(w)).rejects.toMatchObject({ code: 'admission', field: 'image' });
    await expect(rt.load(w, config())).rejects.toMatchObject({ code: 'admission' });
  });

  it('refuses to adopt a labelled container whose image or isolation differs from what create sets', async () => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: 'setInterval(() => {}, 1000);' });
    const w = await containerWorkload(IMAGE);
    const h = await rt.load(w, config());
    const dir = join(fake.dir, 'containers');
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.json')) ?? '');
    const good = readFileSync(file, 'utf8');
    const c = JSON.parse(good);
    const tampered = [
      { ...c, Config: { ...c.Config, Image: `registry.example/other@${digest('c')}` } },
      { ...c, HostConfig: { ...c.HostConfig, NetworkMode: 'host' } },
      { ...c, HostConfig: { ...c.HostConfig, ReadonlyRootfs: false } },
      { ...c, Config: { ...c.Config, User: '0:0' } },
      { ...c, HostConfig: { ...c.HostConfig, CapDrop: [] } },
    ];
    for (const t of tampered) {
      writeFileSync(file, JSON.stringify(t));
      const rt2 = new ContainerRuntime({ engine: fakeEnginePath(), engineEnv: fake.env });
      await expect(rt2.adopt(h, w)).rejects.toMatchObject({ code: 'admission', field: 'container' });
    }
    writeFileSync(file, good);
    const rt3 = new ContainerRuntime({ engine: fakeEnginePath(), engineEnv: fake.env });
    await rt3.adopt(h, w);
    expect((await rt3.status(h)).state).not.toBe('unknown');
    await rt3.unload(h);
  });
});
