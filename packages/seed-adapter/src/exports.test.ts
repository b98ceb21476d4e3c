import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as controller from './controller.js';
import * as api from './index.js';
import * as simulator from './simulator.js';

// The public surface of each entry of @heddle/seed-adapter: its value exports, and the names in its type-only
// export clauses (`export type { ... }` and `type X` specifiers).

describe('@heddle/seed-adapter (src/index.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'SEED_ARCH',
      'SEED_CONCURRENCY_CAP',
      'SEED_PIN_LIMITS',
      'SEED_REGISTRY',
      'SEED_RUNTIME_ID',
      'SEED_TOKEN_RE',
      'SYNTHETIC_FEED_NOTE',
      'SeedApiFailure',
      'SeedApiRuntime',
      'SeedClient',
      'SeedError',
      'SeedInstallUnsureError',
      'SeedPinSchema',
      'SeedStrandedInstallError',
      'isValidToken',
      'loadToken',
      'normalizeSpkiPin',
      'pairSeed',
      'parseSeedPins',
      'readSeedPinsFile',
      'redact',
      'removeToken',
      'saveToken',
      'seedPinWorkload',
      'spkiSha256',
      'spkiSha256OfKey',
      'unpairSeed',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'index.ts'), 'utf8'))).toEqual([
      'CogConfig',
      'CogLogs',
      'CogManifest',
      'ConsoleResult',
      'InstalledCog',
      'PairSeedOptions',
      'PairSeedResult',
      'PairStatus',
      'SeedApi',
      'SeedApiRuntimeOptions',
      'SeedClientOptions',
      'SeedErrorCode',
      'SeedIdentity',
      'SeedPin',
      'SeedStatus',
      'StoreCog',
      'UnpairSeedResult',
    ]);
  });
});

describe('@heddle/seed-adapter/controller (src/controller.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(controller).sort()).toEqual([
      'AddSeedOptionsSchema',
      'SEED_CAPABILITIES',
      'SEED_INSTALL_WINDOW_MS',
      'SEED_NODE_KIND',
      'SEED_TOKEN_REFUSED',
      'SeedDriver',
      'addSeed',
      'parseAddSeedOptions',
      'seedChecks',
      'seedContext',
      'seedDataDir',
      'seedDriver',
      'seedFailure',
      'seedHandle',
      'seedInstanceId',
      'seedNodeId',
      'seedPinOf',
      'seedPlacement',
      'seedVariant',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'controller.ts'), 'utf8'))).toEqual([
      'AddSeedOptions',
    ]);
  });
});

describe('@heddle/seed-adapter/simulator (src/simulator.ts)', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(simulator).sort()).toEqual([
      'DEFAULT_CATALOG',
      'SIMULATOR_USAGE',
      'SeedSimulator',
      'parseSimulatorArgs',
      'runSimulatorFromArgv',
      'selfSignedCert',
      'spkiOfPem',
      'storeCog',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'simulator.ts'), 'utf8'))).toEqual([
      'NoAnswerMode',
      'RunningSimulator',
      'SeedSimulatorOptions',
      'SelfSignedCert',
      'SimInstalledCog',
      'SimRequest',
      'SimulatorArgs',
    ]);
  });
});
