import type { CommandDef } from '@heddle/cli-kit';
import { JSON_FLAG } from '../command-def.js';
import { HOME_FLAG } from './local.js';

// The definition of `heddle state migrate` (docs/cli.md, docs/state.md). Data only.

/** `heddle state migrate`. */
export const STATE_MIGRATE: CommandDef = {
  name: 'state migrate',
  summary: 'copy a SQLite state into an empty PostgreSQL database, then compare the counts',
  positionals: [],
  flags: [
    HOME_FLAG,
    {
      name: 'from',
      kind: 'string',
      value: '<file>',
      description: "the SQLite state database (default: the home's state_db)",
    },
    {
      name: 'to',
      kind: 'string',
      value: '<url>',
      description: "a postgres:// URL (default: the home's state section, kind postgres)",
    },
    { name: 'force', kind: 'boolean', description: 'empty a target that already holds a state first' },
    JSON_FLAG,
  ],
  examples: ['state migrate --home ./ctl --to postgres://heddle@db.example:5432/heddle'],
};

/** `heddle state`. */
export const STATE: CommandDef = {
  name: 'state',
  summary: 'the controller state store (state migrate)',
  subcommands: [STATE_MIGRATE],
};
