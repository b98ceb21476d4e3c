// heddle-host follows the CLI conventions of dispatchCli: --version, help <cmd>, <cmd> --help (exit
// 0), did you mean, completion from the flags the commands parse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from './test-io.js';

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

describe('heddle-host CLI conventions', () => {
  it('--version, help <command>, <command> --help, did you mean, completion', async () => {
    const cwd = tempDir();
    expect(await runCaptured(['--version'], cwd)).toEqual({
      code: 0,
      out: `heddle-host ${VERSION}`,
      err: '',
    });
    for (const name of ['init', 'run', 'id']) {
      expect((await runCaptured([name, '--help'], cwd)).code).toBe(0);
      expect((await runCaptured(['help', name], cwd)).code).toBe(0);
    }
    const typo = await runCaptured(['rnu'], cwd);
    expect(typo.code).toBe(2);
    expect(typo.err.split('\n')[0]).toBe('heddle-host: unknown command "rnu"; did you mean "run"?');
    const bash = await runCaptured(['completion', 'bash'], cwd);
    expect(bash.code).toBe(0);
    expect(bash.out).toContain(
      "init) words='--dir --listen --controller --trust --routes --tier --force --json --help' ;;",
    );
  });
});
