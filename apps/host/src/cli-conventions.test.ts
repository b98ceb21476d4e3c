// heddle-host follows the CLI conventions of dispatchCli: --version, help <cmd>, <cmd> --help (exit
// 0), did you mean, completion from the flags the commands parse.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commandHelp, programHelp } from '@heddle/cli-kit';
import { modulesLoaded } from '@heddle/cli-kit/testing';
import { describe, expect, it } from 'vitest';
import { PROGRAM } from './cli.js';
import { runCaptured, tempDir } from './test-io.js';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

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

  it('every help is the shared renderer of @heddle/cli-kit, from the command definitions', async () => {
    const cwd = tempDir();
    expect((await runCaptured(['--help'], cwd)).out).toBe(programHelp(PROGRAM));
    for (const c of PROGRAM.commands) {
      expect((await runCaptured([c.name, '--help'], cwd)).out, c.name).toBe(commandHelp(PROGRAM, c));
    }
    const init = await runCaptured(['init', '--help'], cwd);
    expect(init.out.split('\n')[0]).toBe(
      'usage: heddle-host init [--dir <dir>] [--listen <host:port>] [--controller <pubkey-hex>]... [--trust <file>] [--routes <native,wasi>] [--tier <discovered|paired|pinned>] [--force] [--json]',
    );
    expect(init.out).toContain('(default: 0.0.0.0:7400)');
  });

  it('reports a mistyped flag with its name, reason and a suggestion (exit 2)', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['run', '--confg', 'x.json', '--json'], cwd);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err).error).toMatchObject({ code: 'usage', field: 'confg', reason: 'unknown_flag' });
    expect(JSON.parse(r.err).error.message).toContain('did you mean "--config"?');
  });

  it('--help and --version load neither the crypto nor the validation stack, nor any command', () => {
    for (const args of [['--help'], ['--version'], ['init', '--help']]) {
      const r = modulesLoaded(['--import', tsx, join(import.meta.dirname, 'bin.ts'), ...args], {
        cwd: tempDir(),
        env: { ...process.env, TSX_TSCONFIG_PATH: join(import.meta.dirname, '..', 'tsconfig.source.json') },
      });
      expect(r.code, args.join(' ')).toBe(0);
      expect(
        r.urls.some((u) => u.endsWith('/cli.ts')),
        'the recording works',
      ).toBe(true);
      const heavy = r.urls.filter((u) =>
        /\/zod\/|@noble|hash-wasm|envelope\/src\/index\.ts|\/commands\//.test(u),
      );
      expect(heavy, args.join(' ')).toEqual([]);
    }
  });
});
