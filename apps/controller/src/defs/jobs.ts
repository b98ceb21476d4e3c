import { type OperatorCommandDef, type OperatorGroupDef, operatorDef } from '../command-def.js';

// The definitions of `heddle job ...`: what each parses, what its --help and the CLI reference
// (docs/cli-reference.md) say. Data only, so that help and completion load nothing else.

const EXITS = {
  0: 'done',
  1: 'the controller is not running, or (job plan) a place would find no node',
  2: 'usage error',
  3: 'bad input: job_invalid (the field is named), unknown_job, unknown_job_version, package_invalid, unauthorized, forbidden',
  4: 'internal error',
} as const;

const FILE_ARG = [
  {
    name: 'file',
    description:
      'the job file (JSON, docs/jobs.md); a relative package path in it is resolved against the file’s directory',
  },
] as const;
const NAME_ARG = [{ name: 'name', description: 'the job’s name (see heddle job status)' }] as const;

/** `heddle job plan`. */
export const JOB_PLAN: OperatorCommandDef = operatorDef({
  name: 'job plan',
  summary: 'show what running a job file would change, with the engine’s explanation; nothing is done',
  description:
    'Like nomad job plan (docs/jobs.md, "Plan"): the version it would make (or that the file is what already runs), then one row per change: ACTION (place, replace, adopt, remove), NODE (the engine’s choice, or the pinned node of a system job), INSTANCE (the one replaced, adopted or removed), VERSION and WHY; then every node the job may not use and why. With --explain, each place’s whole decision. Nothing is written, chained or placed.',
  positionals: FILE_ARG,
  flags: [{ name: 'explain', kind: 'boolean', description: 'print the engine’s decision for each place' }],
  json: 'JobPlanView (docs/operator-api.md, "Jobs")',
  exits: EXITS,
});

/** `heddle job run`. */
export const JOB_RUN: OperatorCommandDef = operatorDef({
  name: 'job run',
  summary: 'run a job file: store it as the job’s next version, to be converged',
  description:
    'The file is validated (job_invalid names the field), its package verified and held; unless it is what already runs, a new version is stored and chained (workload.job, phase run) and made the desired one. The controller’s reconciler places, replaces and removes instances at its next lifecycle tick; see heddle job status.',
  positionals: FILE_ARG,
  flags: [],
  json: '{"changed": boolean, "job": JobStatusView}',
  exits: EXITS,
});

/** `heddle job status`. */
export const JOB_STATUS: OperatorCommandDef = operatorDef({
  name: 'job status',
  summary: 'show a job (or every job): version, rollout, instances and what blocks it',
  description:
    'With a name: the job’s status (running, stopped), desired version, rollout (rolling, complete, failed), last healthy version, why it is blocked or failed, and one row per instance: INSTANCE, NODE, VERSION, STATE, HEALTHY. Without: one row per job.',
  positionals: [{ name: 'name', description: 'the job’s name (every job when absent)', optional: true }],
  flags: [],
  json: '{"job": JobStatusView} or {"jobs": JobStatusView[]}',
  exits: EXITS,
});

/** `heddle job history`. */
export const JOB_HISTORY: OperatorCommandDef = operatorDef({
  name: 'job history',
  summary: 'list the versions of a job: who made each and why',
  description:
    'One row per version, oldest first: VERSION (* marks the desired one), CAUSE (run, revert, auto_revert), FROM (the version a revert copies), BY (the operator), PACKAGE (id@version), SPEC (the spec hash, short) and AGE.',
  positionals: NAME_ARG,
  flags: [],
  json: '{"versions": JobVersionView[]}',
  exits: EXITS,
});

/** `heddle job revert`. */
export const JOB_REVERT: OperatorCommandDef = operatorDef({
  name: 'job revert',
  summary: 'revert a job to one of its versions (as a new version)',
  description:
    'A new version copying that version’s job file and package becomes the desired one (chained: workload.job, phase revert); the reconciler rolls it out as any update. Its package is verified again first: a revoked one is refused.',
  positionals: [
    ...NAME_ARG,
    { name: 'version', description: 'the version to go back to (see heddle job history)' },
  ],
  flags: [],
  json: '{"changed": true, "job": JobStatusView}',
  exits: EXITS,
});

/** `heddle job stop`. */
export const JOB_STOP: OperatorCommandDef = operatorDef({
  name: 'job stop',
  summary: 'stop a job: its instances are stopped, unloaded and forgotten',
  description:
    'The job is marked stopped (chained: workload.job, phase stop) and its instances are taken down at once; what cannot be reached now is taken down by the reconciler later. The job and its versions are kept: heddle job run or revert starts it again as a new version.',
  positionals: NAME_ARG,
  flags: [],
  json: '{"job": JobStatusView}',
  exits: EXITS,
});

/** The definitions of `heddle job ...`, in reference order. */
export const JOB_DEFS: readonly OperatorCommandDef[] = [
  JOB_PLAN,
  JOB_RUN,
  JOB_STATUS,
  JOB_HISTORY,
  JOB_REVERT,
  JOB_STOP,
];

/** `heddle job`: its subcommands. */
export const JOB_GROUP: OperatorGroupDef = {
  name: 'job',
  summary: 'declarative jobs: plan, run, status, history, revert and stop',
  subcommands: JOB_DEFS,
};
