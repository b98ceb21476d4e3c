import { flagLabel, synopsis } from '@heddle/cli-kit';
import type { OperatorCommandDef } from './command-def.js';
import { OPERATOR_DEFS, WHOAMI } from './defs/access.js';
import { APPROVALS_DEFS } from './defs/approvals.js';
import { EVENTS } from './defs/events.js';
import { ALERTS_DEFS, LOGS, PLACE, PS, START, STATUS, STOP, UNLOAD } from './defs/instances.js';
import { JOB_DEFS } from './defs/jobs.js';
import { NODE_DEFS } from './defs/node.js';

/** The operator commands (those that talk to the controller daemon), in reference order. */
export const OPERATOR_COMMANDS: readonly OperatorCommandDef[] = [
  ...NODE_DEFS,
  PLACE,
  PS,
  ...ALERTS_DEFS,
  EVENTS,
  ...APPROVALS_DEFS,
  ...JOB_DEFS,
  STATUS,
  LOGS,
  START,
  STOP,
  UNLOAD,
  ...OPERATOR_DEFS,
  WHOAMI,
];

const anchor = (name: string): string => `heddle-${name.replace(/ /g, '-')}`;
const cell = (s: string): string => s.replace(/\|/g, '\\|');

function section(def: OperatorCommandDef): string[] {
  const lines = [
    `## heddle ${def.name}`,
    '',
    `${def.summary.charAt(0).toUpperCase()}${def.summary.slice(1)}.`,
    '',
    '```',
    synopsis('heddle', def),
    '```',
    '',
    def.description,
    '',
  ];
  if (def.positionals.length > 0) {
    lines.push('| argument | meaning |', '| --- | --- |');
    for (const p of def.positionals) lines.push(`| \`<${p.name}>\` | ${cell(p.description)} |`);
    lines.push('');
  }
  lines.push('| flag | meaning |', '| --- | --- |');
  for (const f of def.flags) {
    const label = flagLabel(f);
    lines.push(
      `| \`${cell(label)}\` | ${cell(f.description)}${f.multiple === true ? ' (repeatable)' : ''} |`,
    );
  }
  lines.push('', `With \`--json\`: ${def.json}.`, '', '| exit | when |', '| --- | --- |');
  for (const [code, meaning] of Object.entries(def.exits)) lines.push(`| ${code} | ${cell(meaning)} |`);
  lines.push('');
  return lines;
}

/**
 * The CLI reference (docs/cli-reference.md) generated from the command definitions: the common
 * flags, exit codes and error format, then one section per operator command. Regenerate it with
 * `node apps/controller/scripts/cli-reference.mjs`; a test checks the committed file equals this.
 */
export function cliReference(defs: readonly OperatorCommandDef[] = OPERATOR_COMMANDS): string {
  const lines = [
    '# heddle CLI reference',
    '',
    '<!-- Generated from the command definitions in apps/controller/src (cli-reference.ts). Do not edit:',
    '     run `node apps/controller/scripts/cli-reference.mjs` to regenerate. -->',
    '',
    'The commands below talk to the controller daemon (`heddle controller run`) through its operator API',
    '(docs/operator-api.md). They find it, first match wins, through `--home <dir>`; `$HEDDLE_ADDR` (a URL,',
    'with the credential of `$HEDDLE_CONTEXT` or the current context, else `$HEDDLE_KEY_FILE` or',
    '`$HEDDLE_TOKEN_FILE`, and `$HEDDLE_FINGERPRINT`); the context `$HEDDLE_CONTEXT` names; `$HEDDLE_HOME`;',
    'the current context (`heddle context use`, kept in `~/.config/heddle/contexts.json`); else `~/.heddle`.',
    "Through a home, the daemon's `api.json` and `api.token` are read; through a context, its URL, pinned",
    'certificate fingerprint and operator key or token (docs/operator-guide.md, "Operating from a second',
    'machine"). The context, keys, chain, package, revocation and policy commands are described in docs/cli.md.',
    '',
    '## Output',
    '',
    '- Human output is aligned tables and `key: value` lines; colour only when standard output is a',
    '  terminal and `NO_COLOR` is unset. A progress bar of each package transfer goes to standard error',
    '  (redrawn in place on a terminal, one line per 25% otherwise).',
    '- `--json` prints exactly the API’s answer as one line of JSON on standard output (schemas:',
    '  apps/controller/src/json-outputs.ts), no colour and no progress bar.',
    '- An error is one line on standard error, `heddle <command>: <what happened>; <what to do next>`,',
    '  followed, when the controller gave them, by one `  <node id>: <reason>` line per node (an',
    '  unplaceable order lists every node). With `--json` it is',
    '  `{"error":{"code","message","field"?,"reasons"?}}` on standard error; a usage error adds `"reason"` and',
    '  `"token"` (the flag or argument as typed: docs/cli.md, "Conventions").',
    '- `heddle <command> --help` and `heddle help <command>` print the synopsis and flags below (exit 0);',
    '  `heddle --version`, "did you mean" for mistyped commands, shell completion (`heddle completion',
    '  bash|zsh`) and a closed pipe (exit 0) are described in docs/cli.md, "Conventions".',
    '',
    '## Exit codes',
    '',
    '| code | meaning | error codes |',
    '| --- | --- | --- |',
    '| 0 | done | |',
    '| 1 | the operation was refused or failed on a node, or could not be done (including a full disk, a read-only file system or a refused permission on this machine) | `unplaceable`, `refused`, `unreachable`, `indeterminate`, `outcome_unknown`, `unsettled`, `duplicate_instance`, `idempotency_in_progress`, `governance`, `node_exists`, `key_mismatch`, `controller_not_running`, `timeout`, `disk_full`, `read_only_filesystem`, `permission_denied` |',
    '| 2 | usage: unknown command or flag, missing or extra argument | `usage` |',
    '| 3 | bad input: a value that does not fit (the field is named), an unknown node, instance or alert, a package that fails verification, a token that is not the daemon’s | `invalid_input`, `bad_json`, `too_large`, `package_invalid`, `unknown_node`, `unknown_instance`, `unknown_alert`, `unauthorized`, `idempotency_conflict` |',
    '| 4 | internal error (a bug: please report it) | `internal`, `state`, `bad_answer`, anything else |',
    '',
    '## Commands',
    '',
    ...defs.map((d) => `- [\`heddle ${d.name}\`](#${anchor(d.name)}): ${d.summary}`),
    '',
  ];
  for (const d of defs) lines.push(...section(d));
  return `${lines.join('\n').trimEnd()}\n`;
}
