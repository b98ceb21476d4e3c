// The CLI conventions of kubectl and nomad, on the real `heddle`: --version, help <cmd>, <cmd> --help
// (exit 0), did you mean, completion scripts from the command definitions, and a closed pipe that
// ends the real process quietly.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openChainFile } from '@heddle/chain';
import { commandHelp, programHelp } from '@heddle/cli-kit';
import { modulesLoaded } from '@heddle/cli-kit/testing';
import { describe, expect, it } from 'vitest';
import { PROGRAM } from './cli.js';
import { OPERATOR_COMMANDS } from './cli-reference.js';
import { runCaptured, tempDir } from './test-io.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string })
  .version;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Runs `heddle <args>` from source as a real process whose standard output is a pipe closed before
 * it writes (what `heddle ... | head -c1` does once head has its byte).
 */
function runIntoClosedPipe(
  args: readonly string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', tsx, join(here, 'bin.ts'), ...args], {
    cwd,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('heddle CLI conventions', () => {
  it('answers --version and version with the package version', async () => {
    const cwd = tempDir();
    expect(await runCaptured(['--version'], cwd)).toEqual({ code: 0, out: `heddle ${VERSION}`, err: '' });
    expect((await runCaptured(['version', '--json'], cwd)).out).toBe(
      JSON.stringify({ name: 'heddle', version: VERSION }),
    );
  });

  it('<command> --help and help <command> exit 0 for every command and subcommand', async () => {
    const cwd = tempDir();
    const node = await runCaptured(['node', '--help'], cwd);
    expect(node.code).toBe(0);
    expect(node.out).toContain(
      'usage: heddle node <add|add-seed|ls|rm|pin|refresh|cordon|uncordon|drain|label> [arguments]',
    );
    expect(await runCaptured(['help', 'node'], cwd)).toEqual(node);
    const ls = await runCaptured(['help', 'node', 'ls'], cwd);
    expect(ls.code).toBe(0);
    expect(ls.out.split('\n')[0]).toBe('usage: heddle node ls [--home <dir>] [--json]');
    expect(await runCaptured(['node', 'ls', '--help'], cwd)).toEqual(ls);
    for (const c of PROGRAM.commands) {
      const r = await runCaptured([c.name, '--help'], cwd);
      expect(r.code, `${c.name} --help: ${r.err}`).toBe(0);
      for (const sub of c.subcommands ?? []) {
        const s = await runCaptured(['help', ...sub.name.split(' ')], cwd);
        expect(s.code, `help ${sub.name}: ${s.err}`).toBe(0);
        expect(s.out.split('\n')[0]).toMatch(new RegExp(`^usage: heddle ${sub.name}( |$)`));
      }
    }
    expect((await runCaptured(['help', 'chain', 'verify'], cwd)).out.split('\n')[0]).toBe(
      'usage: heddle chain verify <file>... [--checkpoint <file>] [--public-key <hex>] [--json]',
    );
  });

  it('the commands dispatched are the definitions of the reference (one source)', () => {
    for (const def of OPERATOR_COMMANDS) {
      const [name] = def.name.split(' ');
      const command = PROGRAM.commands.find((c) => c.name === name);
      const shown =
        command?.name === def.name ? command : command?.subcommands?.find((s) => s.name === def.name);
      expect(shown, def.name).toMatchObject(def);
    }
  });

  it('says "did you mean" for a mistyped command or subcommand (exit 2)', async () => {
    const cwd = tempDir();
    const cmd = await runCaptured(['plcae', 'dir'], cwd);
    expect(cmd.code).toBe(2);
    expect(cmd.err.split('\n')[0]).toBe('heddle: unknown command "plcae"; did you mean "place"?');
    const sub = await runCaptured(['node', 'refersh'], cwd);
    expect(sub.code).toBe(2);
    expect(sub.err.split('\n')[0]).toBe('heddle node: unknown subcommand "refersh"; did you mean "refresh"?');
    const json = await runCaptured(['chain', 'verfy', 'f', '--json'], cwd);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.err).error.message).toContain('did you mean "verify"?');
  });

  it('completion bash completes commands, subcommands and the flags of the definitions', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['completion', 'bash'], cwd);
    expect(r.code).toBe(0);
    writeFileSync(join(cwd, 'heddle.bash'), r.out);
    const complete = (words: string[]): string[] =>
      spawnSync(
        'bash',
        [
          '-c',
          `source heddle.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _heddle_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd, encoding: 'utf8' },
      )
        .stdout.split('\n')
        .filter((l) => l !== '');
    expect(complete(['heddle', 'no'])).toEqual(['node']);
    expect(complete(['heddle', 'node', 'a'])).toEqual(['add', 'add-seed']);
    expect(complete(['heddle', 'node', 'add', '--t'])).toEqual(['--tier']);
    expect(complete(['heddle', 'place', '--dr'])).toEqual(['--dry-run']);
    expect(complete(['heddle', 'alerts', 'a'])).toEqual(['ack']);
    expect(complete(['heddle', 'chain', 'verify', '--pu'])).toEqual(['--public-key']);
    const zsh = await runCaptured(['completion', 'zsh'], cwd);
    expect(zsh.out.startsWith('#compdef heddle\n')).toBe(true);
  });

  it('a closed pipe ends `chain verify` and `--help` quietly with exit 0 (no EPIPE stack trace)', async () => {
    const cwd = tempDir();
    const chain = await openChainFile(join(cwd, 'audit.chain'));
    for (let i = 0; i < 50; i++) await chain.append('workload', 'workload.place', { i });
    await chain.close();
    const [verify, help] = await Promise.all([
      runIntoClosedPipe(['chain', 'verify', 'audit.chain'], cwd),
      runIntoClosedPipe(['--help'], cwd),
    ]);
    expect(verify).toEqual({ code: 0, stderr: '' });
    expect(help).toEqual({ code: 0, stderr: '' });
  });

  it('every help is the shared renderer of @heddle/cli-kit, from the command definitions', async () => {
    const cwd = tempDir();
    expect((await runCaptured(['--help'], cwd)).out).toBe(programHelp(PROGRAM));
    for (const c of PROGRAM.commands) {
      expect((await runCaptured([c.name, '--help'], cwd)).out, c.name).toBe(commandHelp(PROGRAM, c));
      for (const sub of c.subcommands ?? []) {
        expect((await runCaptured(['help', ...sub.name.split(' ')], cwd)).out).toBe(
          commandHelp(PROGRAM, sub),
        );
      }
    }
  });

  it('dispatches every subcommand a command runs (revoke renew was refused as unknown)', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['revoke', 'renew', '--json'], cwd);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err).error).toMatchObject({ code: 'usage', field: 'key', reason: 'missing_flag' });
    expect((await runCaptured(['help', 'revoke', 'renew'], cwd)).out.split('\n')[0]).toBe(
      'usage: heddle revoke renew --key <file> [--list <file>] [--trust <file>] [--valid-days <N>] [--above <G>] [--json]',
    );
  });

  it('the parser names the offending flag itself, in every command (no guess from the message)', async () => {
    const cwd = tempDir();
    const cases: [string[], Record<string, string>][] = [
      [
        ['node', 'add', 'ws://h:1', '--tier', 'paired', '--kye', 'x'],
        { field: 'kye', reason: 'unknown_flag', token: '--kye' },
      ],
      [['place', 'dir', '--node'], { field: 'node', reason: 'missing_value', token: '--node' }],
      [['ps', '--all=yes'], { field: 'all', reason: 'unexpected_value', token: '--all=yes' }],
      [['chain', 'verify'], { field: 'file', reason: 'missing_argument' }],
      [['pkg', 'inspect', 'a', 'b'], { reason: 'unexpected_argument', token: 'b' }],
      [['pkg', 'build', 'src', '-o'], { field: 'out', reason: 'missing_value', token: '-o' }],
    ];
    for (const [argv, want] of cases) {
      const r = await runCaptured([...argv, '--json'], cwd);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(JSON.parse(r.err).error, argv.join(' ')).toMatchObject({ code: 'usage', ...want });
    }
    const typo = await runCaptured(['node', 'add', 'ws://h:1', '--tierr', 'paired'], cwd);
    expect(typo.err.split('\n')[0]).toBe('heddle node add: unknown flag --tierr; did you mean "--tier"?');
  });

  it('heddle place loads the API client, not the control plane, the wire, the gate or ws', () => {
    const cwd = tempDir();
    // No daemon runs in this home: the command gets as far as the API client, then fails.
    const r = modulesLoaded(
      ['--import', tsx, join(here, 'bin.ts'), 'place', cwd, '--home', join(cwd, 'nohome'), '--json'],
      { cwd, env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') } },
    );
    expect(r.code).toBe(1); // check failed: controller_not_running
    expect(r.urls.some((u) => u.endsWith('/operator-api/src/client.ts'))).toBe(true);
    expect(r.urls.some((u) => u.endsWith('/control-plane/src/contract.ts'))).toBe(true);
    const heavy = r.urls.filter((u) =>
      /\/ws\/|\/wire\/src\/|\/gate\/src\/|control-plane\/src\/(index|control-plane|place)\.ts|better-sqlite3/.test(
        u,
      ),
    );
    expect(heavy).toEqual([]);
  });

  it('heddle job plan parses the job file with the contract entry only, then loads the API client', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'web.json'), JSON.stringify({ name: 'web', package: './pkg', count: 2 }));
    const r = modulesLoaded(
      [
        '--import',
        tsx,
        join(here, 'bin.ts'),
        'job',
        'plan',
        'web.json',
        '--home',
        join(cwd, 'nohome'),
        '--json',
      ],
      { cwd, env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') } },
    );
    expect(r.code).toBe(1); // check failed: controller_not_running (the file parsed)
    expect(r.urls.some((u) => u.endsWith('/control-plane/src/job-file.ts'))).toBe(true);
    expect(r.urls.some((u) => u.endsWith('/operator-api/src/client.ts'))).toBe(true);
    const heavy = r.urls.filter((u) =>
      /\/ws\/|\/wire\/src\/|\/gate\/src\/|control-plane\/src\/(index|control-plane|place|job-reconcile)\.ts|better-sqlite3/.test(
        u,
      ),
    );
    expect(heavy).toEqual([]);
  }, 120_000);

  it('--help and --version load neither the crypto nor the validation stack, nor any command', () => {
    for (const args of [['--help'], ['--version'], ['place', '--help']]) {
      const r = modulesLoaded(['--import', tsx, join(here, 'bin.ts'), ...args], {
        cwd: tempDir(),
        env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') },
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
