import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as contract from './contract.js';
import * as driver from './driver.js';
import * as api from './index.js';
import * as leader from './leader.js';
import * as postgres from './postgres.js';
import * as sqlite from './sqlite.js';
import * as testing from './testing.js';

// The public surface of each entry of @heddle/control-plane: its value exports, and the names in its type-only
// export clauses (`export type { ... }` and `type X` specifiers).

describe('@heddle/control-plane (src/index.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ALERT_KIND',
      'API_HOST',
      'APPROVAL_STATES',
      'CONTROLLER_CONFIG_SCHEMA',
      'Caller',
      'ControlPlane',
      'ControllerConfigFileSchema',
      'DEFAULT_API_PORT',
      'DEFAULT_PLANE_CONFIG',
      'DaemonLoop',
      'HELD_PLACE_STATUSES',
      'HOST_NODE_KIND',
      'IDEMPOTENCY_KEY_PATTERN',
      'IDEMPOTENCY_KEY_TTL_MS',
      'JobName',
      'JobSpecSchema',
      'LabelName',
      'LabelValue',
      'MAX_JOB_COUNT',
      'MAX_NODE_LABELS',
      'NODE_KIND',
      'PLACEMENT_STATES',
      'PLANE_CHAIN_SOURCE',
      'PLANE_EVENT_TYPES',
      'PlaceOrderInputSchema',
      'PlaneError',
      'PlaneEvents',
      'REVOKE_METHOD',
      'StateError',
      'actorField',
      'copyState',
      'countState',
      'currentActor',
      'hostDriver',
      'jobIssues',
      'jobSpecHash',
      'logTick',
      'parseJobSpec',
      'parseJobText',
      'parseOrder',
      'planeConfig',
      'runAsActor',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'index.ts'), 'utf8'))).toEqual([
      'Actor',
      'AddNodeOptions',
      'AlertEventData',
      'AlertReason',
      'AlertRecord',
      'ApprovalEvent',
      'ApprovalEventData',
      'ApprovalEventKind',
      'ApprovalEventState',
      'ApprovalListener',
      'ApprovalOutcomeView',
      'ApprovalView',
      'ApprovalViewState',
      'AttemptOutcome',
      'AttemptOutcomeKind',
      'CallSpec',
      'ControlPlaneOptions',
      'ControllerConfigFile',
      'CopyableStore',
      'DaemonLoopOptions',
      'DrainLeft',
      'DrainMove',
      'DrainReport',
      'EventsSince',
      'HeldPlaceStatus',
      'HeldPlaceView',
      'HeldRevocationList',
      'HostSoftwareRecord',
      'IdempotencyRecord',
      'InstancePlacedData',
      'InstanceRemovedData',
      'InstanceRescheduledData',
      'InstanceStateData',
      'JobConstraints',
      'JobEventData',
      'JobHealthCheck',
      'JobInstanceRecord',
      'JobInstanceView',
      'JobIssue',
      'JobPlanChange',
      'JobPlanView',
      'JobReconcileReport',
      'JobRecord',
      'JobRunView',
      'JobSpec',
      'JobStatusView',
      'JobUpdate',
      'JobVersionRecord',
      'JobVersionView',
      'LabelChange',
      'LabelConstraint',
      'NodeClockView',
      'NodeDriver',
      'NodeJoinedData',
      'NodeLivenessData',
      'NodeLoad',
      'NodeMetaRecord',
      'NodeRemovedData',
      'NodeView',
      'OrderPackageFacts',
      'OrderRecord',
      'OrderStorePin',
      'PlaceClaimRecord',
      'PlaceHooks',
      'PlaceOrderInput',
      'PlaceResult',
      'PlacementRecord',
      'PlacementState',
      'PlaneConfig',
      'PlaneErrorCode',
      'PlaneEvent',
      'PlaneEventListener',
      'PlaneEventMap',
      'PlaneEventType',
      'PlaneEventsOptions',
      'PostgresStateConfig',
      'ReloadableRevocations',
      'RemoteApiConfig',
      'RescheduleRecord',
      'RevocationAckRecord',
      'RevocationNodeResult',
      'RevocationPushReport',
      'SeedTargetInfo',
      'SettleReport',
      'SharedStateChange',
      'StateConfig',
      'StateCounts',
      'StateErrorCode',
      'StateStore',
      'TargetRecord',
      'TickLog',
      'TickReport',
      'TransferProgress',
      'UnsettledRecord',
    ]);
  });
});

describe('@heddle/control-plane/driver (src/driver.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(driver).sort()).toEqual([
      'HOST_NODE_KIND',
      'PLANE_CHAIN_SOURCE',
      'PlaneError',
      'attemptPackage',
      'chainAttempt',
      'chainChange',
      'chainDecision',
      'dispatchRanked',
      'dryRun',
      'dryRunChecks',
      'engineView',
      'lifeOf',
      'nodeKind',
      'orderRecord',
      'stageNew',
      'unplaceable',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'driver.ts'), 'utf8'))).toEqual([
      'Attempt',
      'AttemptExtras',
      'AttemptOutcome',
      'AttemptOutcomeKind',
      'CheckedLiveness',
      'DepartedEntry',
      'HostListing',
      'InstanceVerb',
      'ListedInstance',
      'LiveEngineView',
      'LiveViewSource',
      'LiveViewStats',
      'NodeBook',
      'NodeDriver',
      'NodeDrivers',
      'OrderRecord',
      'OrderStorePin',
      'PackageAttempt',
      'PlaceCheck',
      'PlaceHooks',
      'PlaceOrderInput',
      'PlaceResult',
      'PlaceSend',
      'PlaceTransport',
      'PlacementRecord',
      'PlaneContext',
      'PlaneErrorCode',
      'RevocationNodeResult',
      'SeedTargetInfo',
      'SettleOutcome',
      'StagedChange',
      'StateStore',
      'TargetRecord',
      'UnsettledRecord',
    ]);
  });
});

describe('@heddle/control-plane/contract (src/contract.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(contract).sort()).toEqual([
      'APPROVAL_STATES',
      'HELD_PLACE_STATUSES',
      'IDEMPOTENCY_KEY_PATTERN',
      'JobName',
      'JobSpecSchema',
      'LabelName',
      'LabelValue',
      'MAX_JOB_COUNT',
      'PLACEMENT_STATES',
      'PlaceOrderInputSchema',
      'PlaneError',
      'StateError',
      'actorField',
      'currentActor',
      'jobIssues',
      'jobSpecHash',
      'parseJobSpec',
      'parseJobText',
      'runAsActor',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'contract.ts'), 'utf8'))).toEqual([
      'Actor',
      'ApprovalView',
      'ApprovalViewState',
      'HeldPlaceStatus',
      'JobConstraints',
      'JobHealthCheck',
      'JobIssue',
      'JobSpec',
      'JobUpdate',
      'PlaceOrderInput',
    ]);
  });

  it('is the same schema and classes as the main entry', () => {
    expect(contract.PlaceOrderInputSchema).toBe(api.PlaceOrderInputSchema);
    expect(contract.PlaneError).toBe(api.PlaneError);
    // One actor scope for the operator API and the plane's chained decisions.
    expect(contract.runAsActor).toBe(api.runAsActor);
  });
});

describe('@heddle/control-plane/leader (src/leader.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(leader).sort()).toEqual(['LeaderElector', 'PgLeaderLease']);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'leader.ts'), 'utf8'))).toEqual([
      'AcquireResult',
      'LeaderElectorOptions',
      'LeaderLeaseBackend',
      'LeaderStatus',
      'LeaseConnection',
      'LeaseRow',
      'NewTerm',
    ]);
  });
});

describe('@heddle/control-plane/sqlite (src/sqlite.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(sqlite).sort()).toEqual([
      'MIGRATIONS',
      'SCHEMA_VERSION',
      'SqliteStateStore',
      'checkSchemaVersion',
      'migrate',
      'readSchemaVersion',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'sqlite.ts'), 'utf8'))).toEqual([
      'Migration',
      'SqliteStoreOptions',
    ]);
  });
});

describe('@heddle/control-plane/postgres (src/postgres.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(postgres).sort()).toEqual([
      'PG_MIGRATIONS',
      'PgCallError',
      'PostgresStateStore',
      'SyncPg',
      'migratePg',
      'readPgSchemaVersion',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'postgres.ts'), 'utf8'))).toEqual([
      'PgConnectionConfig',
      'PgMigration',
      'PostgresConnection',
      'PostgresStoreOptions',
      'SharedWatchOptions',
      'SharedWatchStatus',
      'SyncPgOptions',
      'SyncPgResult',
    ]);
  });
});

describe('@heddle/control-plane/testing (src/testing.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'OPEN_POLICY',
      'controllerKeys',
      'examplePackage',
      'findPostgresBin',
      'nativePackage',
      'openPlane',
      'operatorKeys',
      'planeError',
      'postgresSkipReason',
      'publisherKeys',
      'startCutProxy',
      'startHost',
      'startPostgres',
      'tempDir',
      'testAnchors',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'testing.ts'), 'utf8'))).toEqual([
      'CutProxy',
      'OpenPlaneOptions',
      'StartPostgresOptions',
      'TestHost',
      'TestPlane',
      'TestPostgres',
    ]);
  });
});
