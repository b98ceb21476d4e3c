// heddle-seed follows the CLI conventions of dispatchCli: --version, help <cmd> [<sub>], <cmd> --help
// (exit 0), did you mean for commands and subcommands, completion from the usages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from './test-io.js';

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

describe('heddle-seed CLI conventions', () => {
  it('--version, help <command>, <command> --help, did you mean, completion', async () => {
    const cwd = tempDir();
    expect(await runCaptured(['--version'], cwd)).toEqual({
      code: 0,
      out: `heddle-seed ${VERSION}`,
      err: '',
    });
    const pin = await runCaptured(['pin', '--help'], cwd);
    expect(pin.code).toBe(0);
    expect(pin.out.split('\n')[0]).toBe(
      'usage: heddle-seed pin add <id>@<version> [--sha256 H] [--console=CMD]... | pin ls | pin rm <id> [--home D] [--json]',
    );
    expect(await runCaptured(['help', 'pin', 'add'], cwd)).toEqual(pin);
    const typo = await runCaptured(['pin', 'lss'], cwd);
    expect(typo.code).toBe(2);
    expect(typo.err.split('\n')[0]).toBe('heddle-seed pin: unknown subcommand "lss"; did you mean "ls"?');
    expect((await runCaptured(['pari'], cwd)).err.split('\n')[0]).toBe(
      'heddle-seed: unknown command "pari"; did you mean "pair"?',
    );
    const bash = await runCaptured(['completion', 'bash'], cwd);
    expect(bash.out).toContain("add) words='--sha256 --console --help' ;;");
    expect(bash.out).toContain(
      "init) words='--url --pin-spki --allow-plain-http --client-name --force --home --json --help' ;;",
    );
  });
});
