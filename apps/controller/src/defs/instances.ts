import { type OperatorCommandDef, operatorDef } from '../command-def.js';

// The definitions of the operator commands on instances (place, ps, alerts, status, logs, start, stop,
// unload): what each parses, what its --help and the CLI reference (docs/cli-reference.md) say. Data
// only, so that help and completion load nothing else.

/** `heddle place`. */
export const PLACE: OperatorCommandDef = operatorDef({
  name: 'place',
  summary: 'place a signed package on the best node, and start it',
  description: [
    'The controller verifies the package against its trust anchors and revocations, asks governance (`workload.place`) for each node, runs the placement engine, chains the decision, and dispatches to the winner, then to the other eligible candidates in rank order when one fails safely (a --node pin goes only to its node). A progress bar shows the package transfer to each node (on standard error; none with --json).',
    'Every place carries an idempotency key (a new one per invocation, or --idempotency-key). When the connection to the controller breaks after the place was sent, the outcome is unknown (outcome_unknown, exit 1) and the key is printed: the same command with --idempotency-key <key> answers with what that place did and never places twice.',
    'When the policy defers the place to an operator (a `defer` rule), the place is held, not lost: it prints `awaiting approval <id>` and exits 0 (--json: status `awaiting_approval` with `approval_id`); `heddle approvals show <id>` shows it and `heddle approvals approve <id>` lets it proceed through the engine. With --wait it waits for the decision instead and exits 0 only when the approved place was placed.',
    'An unplaceable order names every node’s reason, one per line. --dry-run decides and explains without chaining or placing anything; --explain prints the engine’s table: one row per node, chosen, candidate (scored lower) or rejected with its reasons.',
  ].join('\n\n'),
  positionals: [
    {
      name: 'package-dir',
      description:
        'a built and signed package directory, or `store:<id>@<version>`: a Cognitum Seed store cog the operator pins (placed only on Seeds, see node add-seed)',
    },
  ],
  flags: [
    { name: 'node', kind: 'string', value: '<id>', description: 'place on this node only (a pin)' },
    {
      name: 'constraint',
      kind: 'string',
      value: '<label.name=value>',
      multiple: true,
      description:
        'only nodes carrying this label with this value (heddle node label); a node without it is rejected with the constraint labels',
    },
    {
      name: 'spread',
      kind: 'string',
      value: '<label>',
      description:
        'spread this workload’s instances over the values of a node label: nodes whose value holds fewer of them score higher',
    },
    { name: 'prefer', kind: 'string', value: '<id>', multiple: true, description: 'prefer this node' },
    { name: 'avoid', kind: 'string', value: '<id>', multiple: true, description: 'avoid this node' },
    {
      name: 'mode',
      kind: 'string',
      value: '<once|interval:N|listener>',
      description: 'run mode: once (default), every N seconds (1..86400), or a listener',
    },
    { name: 'no-start', kind: 'boolean', description: 'place it but do not start it' },
    {
      name: 'sha256',
      kind: 'string',
      value: '<hex>',
      description: 'with store:…: pin the store artifact’s SHA-256 too',
    },
    {
      name: 'console',
      kind: 'string',
      value: '<command>',
      multiple: true,
      description: 'with store:…: a console command the operator allows',
    },
    { name: 'allow-emulated', kind: 'boolean', description: 'emulated variants may be chosen' },
    {
      name: 'no-migrate',
      kind: 'boolean',
      description:
        'never place it again on another node when its node dies (it needs a sensor or device there): raise an alert instead',
    },
    { name: 'dry-run', kind: 'boolean', description: 'decide and explain; chain nothing, place nothing' },
    {
      name: 'idempotency-key',
      kind: 'string',
      value: '<key>',
      description:
        'the key of this place (1..128 of A-Z a-z 0-9 . _ : -; default: a new one per invocation): the same command again with the same key answers with what that place did and never places twice',
    },
    {
      name: 'request-id',
      kind: 'string',
      value: '<id>',
      description:
        'the id of this request (1..128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit; default: a new UUID per invocation): sent as x-request-id, logged by the controller and by the host that places it',
    },
    { name: 'explain', kind: 'boolean', description: 'print the engine’s explanation table' },
    {
      name: 'wait',
      kind: 'boolean',
      description:
        'when the policy defers the place to an operator, wait until the approval is decided (or expires) and print what became of the place',
    },
    {
      name: 'set',
      kind: 'string',
      value: '<key=value>',
      multiple: true,
      description:
        'a config value: true, false, null and numbers are typed, anything else is a string (a JSON string in quotes stays a string: key=\'"true"\')',
    },
  ],
  json: 'PlaceResult: {status, approval_id?, order_id, decision_id, instance, attempts, explanation}; with --wait on a held place, the final {"approval": ApprovalView}',
  exits: {
    0: 'placed (or a dry run that found a node, or held awaiting approval without --wait)',
    1: 'unplaceable (every node’s reason is printed), with --wait an approval that was rejected, expired or whose place failed, refused by every candidate, denied by governance, the node already holds the identical instance (duplicate_instance), the --idempotency-key is still being placed by another controller (idempotency_in_progress: retry later), unsettled, indeterminate or outcome unknown (see heddle ps; retry with the printed --idempotency-key), or the controller is not running',
    2: 'usage error',
    3: 'bad input: --mode, --set, --idempotency-key, --request-id or a node id that does not fit (the field is named), a package that fails verification (package_invalid), a key already used for another order (idempotency_conflict)',
    4: 'internal error',
  },
});

/** `heddle ps`. */
export const PS: OperatorCommandDef = operatorDef({
  name: 'ps',
  summary: 'list the placed instances',
  description:
    'One row per instance the controller placed: INSTANCE, WORKLOAD (id@version), NODE (the first 8 characters of its id), STATE (as the controller last knew it: placed, running, stopped, failed, lost, unloaded), DESIRED (running or stopped, as the operator last asked) and AGE (since it was placed). Unloaded instances are hidden unless --all.',
  positionals: [],
  flags: [{ name: 'all', kind: 'boolean', description: 'include unloaded instances' }],
  json: '{"instances": PlacementRecord[]} (unloaded ones only with --all)',
  exits: {
    0: 'listed',
    1: 'the controller is not running',
    2: 'usage error',
    3: 'bad input (unauthorized)',
    4: 'internal error',
  },
});

const ALERTS_EXITS: Readonly<Record<number, string>> = {
  0: 'done',
  1: 'the controller is not running',
  2: 'usage error',
  3: 'bad input: unknown_alert (see heddle alerts --all), unauthorized',
  4: 'internal error',
};

/** `heddle alerts`. */
export const ALERTS_LS: OperatorCommandDef = operatorDef({
  name: 'alerts',
  summary: 'list the alerts: lost instances the controller did not move',
  description:
    'One row per alert (docs/lifecycle.md): ALERT, REASON (pinned: its order names a node; not_migratable: a Seed store cog or an order placed with --no-migrate; reschedule_limit: its lineage was rescheduled the most times allowed; no_order), INSTANCE, NODE and AGE, then the detail. Each is raised once per instance and reason, and chained as workload.alert. Acknowledged alerts are hidden unless --all.',
  positionals: [],
  flags: [{ name: 'all', kind: 'boolean', description: 'include acknowledged alerts' }],
  json: '{"alerts": AlertRecord[]} (acknowledged ones only with --all)',
  exits: ALERTS_EXITS,
});

/** `heddle alerts ack`. */
export const ALERTS_ACK: OperatorCommandDef = operatorDef({
  name: 'alerts ack',
  summary: 'acknowledge an alert (it is then hidden from heddle alerts)',
  description:
    'Marks the alert acknowledged (chained as workload.alert, phase acknowledged). Nothing else changes: the instance stays lost until its node returns, or until it is placed again by hand.',
  positionals: [{ name: 'alert', description: 'the alert id (see heddle alerts)' }],
  flags: [],
  json: '{"alert": AlertRecord}',
  exits: ALERTS_EXITS,
});

/** The definitions of `heddle alerts ...`. */
export const ALERTS_DEFS: readonly OperatorCommandDef[] = [ALERTS_LS, ALERTS_ACK];

/** Exit codes of the commands that act on one instance. */
export const INSTANCE_EXITS: Readonly<Record<number, string>> = {
  0: 'done',
  1: 'the node refused, could not be reached or gave no valid answer (refused, unreachable, indeterminate), or the controller is not running',
  2: 'usage error',
  3: 'bad input: unknown_instance (see heddle ps), invalid_input naming the field, unauthorized',
  4: 'internal error',
};

/** `heddle status`. */
export const STATUS: OperatorCommandDef = operatorDef({
  name: 'status',
  summary: 'show one instance: the controller’s placement and the host’s own view',
  description:
    'Asks the instance’s node for its status (the controller’s record is updated from the answer) and prints the placement (workload, node, variant, runtime, state, the decision and order that placed it, the package) followed by the host’s view as `host.<field>` lines.',
  positionals: [{ name: 'instance', description: 'the instance id (see heddle ps)' }],
  flags: [],
  json: '{"placement": PlacementRecord, "node": <the host’s instance view>}',
  exits: INSTANCE_EXITS,
});

/** `heddle logs`. */
export const LOGS: OperatorCommandDef = operatorDef({
  name: 'logs',
  summary: 'print the last lines of an instance’s output; --follow keeps printing new ones',
  description:
    'Asks the instance’s node for the last --lines lines of its output (default 100, at most 10000). With --follow it asks again every second and prints only the lines that are new, until interrupted (Ctrl-C, exit 0). With --json each answer is one line: the first is the API’s answer, each later one holds only the new lines.',
  positionals: [{ name: 'instance', description: 'the instance id (see heddle ps)' }],
  flags: [
    { name: 'lines', kind: 'string', value: 'N', description: 'how many lines (1..10000, default 100)' },
    { name: 'follow', kind: 'boolean', description: 'keep printing new lines until interrupted' },
  ],
  json: '{"instance_id", "lines": string[], "truncated": boolean} (with --follow, one such object per line)',
  exits: INSTANCE_EXITS,
});

const INSTANCE_ARG = [{ name: 'instance', description: 'the instance id (see heddle ps)' }] as const;

/** `heddle start`. */
export const START: OperatorCommandDef = operatorDef({
  name: 'start',
  summary: 'start a placed instance',
  description:
    'Sends `workload.start` to the instance’s node with a chained controller decision, and records that the operator wants it running.',
  positionals: INSTANCE_ARG,
  flags: [],
  json: '{"placement": PlacementRecord}',
  exits: INSTANCE_EXITS,
});

/** `heddle stop`. */
export const STOP: OperatorCommandDef = operatorDef({
  name: 'stop',
  summary: 'stop a running instance',
  description:
    'Sends `workload.stop` to the instance’s node with a chained controller decision (the node stops it gracefully within --grace-ms, then forcibly) and prints the node’s evidence.',
  positionals: INSTANCE_ARG,
  flags: [
    {
      name: 'grace-ms',
      kind: 'string',
      value: 'N',
      description: 'how long the instance may take to stop on its own, in ms (0..600000)',
    },
  ],
  json: '{"placement": PlacementRecord, "evidence": <the node’s stop evidence>}',
  exits: INSTANCE_EXITS,
});

/** `heddle unload`. */
export const UNLOAD: OperatorCommandDef = operatorDef({
  name: 'unload',
  summary: 'unload an instance from its node and release its reservation',
  description:
    'Sends `workload.unload` to the instance’s node with a chained controller decision. The controller keeps the record as `unloaded` (heddle ps --all shows it).',
  positionals: INSTANCE_ARG,
  flags: [],
  json: '{"placement": PlacementRecord}',
  exits: INSTANCE_EXITS,
});

/** `heddle alerts`: lists the alerts, and holds `alerts ack`. */
export const ALERTS_GROUP: OperatorCommandDef = { ...ALERTS_LS, subcommands: [ALERTS_ACK] };
