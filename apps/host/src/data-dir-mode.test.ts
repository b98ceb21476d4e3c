// The data directory and the directories a native workload must pass through are 0711 whatever the
// umask: the shipped systemd unit sets UMask=0077, under which a plain mkdir gives 0700, and a native
// workload running as native.run_as_user could then not reach its own directories.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { startHost } from './daemon.js';
import { runCaptured, tempDir } from './test-io.js';

describe('heddle-host run under UMask=0077', () => {
  it.skipIf(process.platform === 'win32')(
    'creates data_dir, instances/ and native/ with mode 0711',
    async () => {
      const cwd = tempDir();
      const controller = toHex(generateKeyPair().publicKey);
      const init = await runCaptured(
        ['init', '--listen', '127.0.0.1:0', '--controller', controller, '--routes', 'wasi', '--json'],
        cwd,
      );
      expect(init.code, init.err).toBe(0);
      const path = join(cwd, 'heddle-host', 'heddle-host.json');
      const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      writeFileSync(path, JSON.stringify({ ...file, data_dir: 'state' }));
      const previous = process.umask(0o077);
      let host: Awaited<ReturnType<typeof startHost>> | undefined;
      try {
        host = await startHost(loadHostConfig(path), new Logger(() => {}));
      } finally {
        process.umask(previous);
      }
      try {
        const dataDir = join(cwd, 'heddle-host', 'state');
        for (const d of [dataDir, join(dataDir, 'instances'), join(dataDir, 'native')]) {
          expect((statSync(d).mode & 0o777).toString(8), d).toBe('711');
        }
      } finally {
        await host.stop('test');
      }
    },
  );
});
