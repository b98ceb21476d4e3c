import { HeddleError } from '@heddle/envelope';
import { CliError, ExitCode } from './cli-error.js';
import { chain } from './commands/chain.js';
import { id } from './commands/id.js';
import { keygen } from './commands/keygen.js';
import { pkg } from './commands/pkg.js';
import { policy } from './commands/policy.js';
import { revoke } from './commands/revoke.js';
import { type CliIo, processIo } from './io.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  keygen: { run: keygen, summary: 'create an Ed25519 key file (mode 0600)' },
  id: { run: id, summary: 'print the node id and public key of a key' },
  chain: { run: chain, summary: 'verify, tail, prove and checkpoint an audit chain file' },
  pkg: { run: pkg, summary: 'create, build, sign, verify and inspect workload packages' },
  revoke: { run: revoke, summary: 'revoke packages, signers and artifacts; list revocations' },
  policy: { run: policy, summary: 'check and validate governance policies' },
};

/** The top-level help text. */
export function helpText(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    'heddle: place signed, governed workloads onto edge nodes',
    '',
    'usage: heddle <command> [arguments] [--json]',
    '',
    'commands:',
    ...rows,
    '',
    'exit codes: 0 ok, 1 check failed, 2 usage error, 3 bad input, 4 internal error',
  ].join('\n');
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message}}` with `--json`).
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(helpText());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`heddle: unknown command ${JSON.stringify(name)}\n\n${helpText()}`);
    return ExitCode.usage;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    const e =
      err instanceof CliError
        ? err
        : err instanceof HeddleError
          ? new CliError(
              err.code,
              err.message,
              ExitCode.badInput,
              err.field ? { field: err.field } : undefined,
            )
          : new CliError(
              'internal',
              `internal error: ${(err as Error)?.stack ?? String(err)}`,
              ExitCode.internal,
            );
    if (json) io.err(JSON.stringify({ error: { code: e.code, message: e.message, field: e.field } }));
    else io.err(`heddle ${name}: ${e.message}`);
    return e.exitCode;
  }
}
