import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The names in the `export type { ... }` clauses of an index file, sorted. */
function typeExports(file: URL): string[] {
  const text = readFileSync(file, 'utf8');
  const names: string[] = [];
  for (const m of text.matchAll(/export type \{([^}]*)\}/g)) {
    for (const n of (m[1] ?? '').split(',')) if (n.trim() !== '') names.push(n.trim());
  }
  return names.sort();
}

describe('@heddle/model exports (changes only on purpose: update this list when you mean to change the API)', () => {
  it('exports these values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'COG_ARCHES',
      'COG_ROUTES',
      'ChainKind',
      'ChainSource',
      'InstanceLife',
      'LIFECYCLE_HISTORY',
      'LIFECYCLE_STATES',
      'LIFECYCLE_TRANSITIONS',
      'LifecycleError',
      'MAX_INTERVAL_SECS',
      'NETWORK_LEVELS',
      'NODE_TIERS',
      'REVOCATION_KINDS',
      'ROUTE_NETWORK',
      'RUN_MODE_TYPES',
      'RunModeSchema',
      'canTransition',
      'deriveInstanceId',
      'isCogArch',
      'isCogRoute',
      'isGone',
      'isNetworkLevel',
      'isNodeTier',
      'lifecyclePayload',
      'networkRank',
      'parseVariantName',
      'routeFitsArch',
      'routeNetwork',
      'tierRank',
      'variantName',
    ]);
  });

  it('exports these types', () => {
    expect(typeExports(new URL('./index.ts', import.meta.url))).toEqual([
      'CogArch',
      'CogRoute',
      'KnownChainKind',
      'KnownChainSource',
      'LifecycleState',
      'LifecycleTransition',
      'NetworkLevel',
      'NodeTier',
      'RevocationCheck',
      'RevocationKind',
      'RevocationRefs',
      'RevokedSubject',
      'RunMode',
      'VariantName',
    ]);
  });
});
