import { storePinRef } from '@heddle/package';
import { type Admission, RuntimeError, type RuntimeWorkload } from '@heddle/runtime';
import type { StoreCog } from './seed-api.js';
import { SEED_REGISTRY, type SeedPin, seedStorePin } from './seed-pins.js';

/** The Seed adapter's id and route. */
export const SEED_RUNTIME_ID = 'remote.api';

/** The architecture Seed cogs run as. */
export const SEED_ARCH = 'armv7';

/**
 * The operator pin a workload stands for. Refuses (`admission`): a signed package (those go to nodes
 * Heddle runs on, never the store path), a store pin of another registry, an id and version the
 * operator did not pin for this Seed, a workload whose SHA-256 differs from the operator pin's.
 */
export function pinFor(pins: readonly SeedPin[], w: RuntimeWorkload): SeedPin {
  const src = w.source;
  if (src.type !== 'store_pin') {
    throw new RuntimeError(
      'admission',
      'source: the Seed installs only operator-pinned store cogs; signed packages go to native, wasi or container nodes',
      { field: 'source' },
    );
  }
  if (src.pin.registry !== SEED_REGISTRY) {
    throw new RuntimeError(
      'admission',
      `source.registry: ${src.pin.registry} is not the Seed store (${SEED_REGISTRY})`,
      { field: 'source.registry' },
    );
  }
  const pin = pins.find((p) => p.id === src.pin.id && p.version === src.pin.version);
  if (pin === undefined || w.id !== pin.id || w.version !== pin.version) {
    throw new RuntimeError(
      'admission',
      `${src.pin.id}@${src.pin.version} is not pinned by the operator for this Seed`,
      { field: 'workload.id' },
    );
  }
  if (src.pin.sha256 !== undefined && pin.sha256 !== undefined && src.pin.sha256 !== pin.sha256) {
    throw new RuntimeError('admission', `${pin.id}: the workload's sha256 differs from the operator pin`, {
      field: 'source.sha256',
    });
  }
  return pin;
}

/**
 * Checks the Seed store's catalog against the pin: the store must list the cog at exactly the pinned
 * version (a store that moved on, "drift", is refused: an install of the id installs whatever the store
 * has now) and, when the pin names a SHA-256, with exactly that digest. Refuses with `admission`.
 */
export function admitFromStore(pin: SeedPin, w: RuntimeWorkload, store: readonly StoreCog[]): Admission {
  const entry = store.find((c) => c.id === pin.id);
  if (entry === undefined) {
    throw new RuntimeError('admission', `the Seed store does not list ${pin.id}`, { field: 'workload.id' });
  }
  if (entry.version !== pin.version) {
    throw new RuntimeError(
      'admission',
      `version drift: the Seed store has ${pin.id}@${entry.version}, the operator pinned ${pin.version}`,
      { field: 'workload.version' },
    );
  }
  const want = [pin.sha256, w.source.type === 'store_pin' ? w.source.pin.sha256 : undefined].filter(
    (s): s is string => s !== undefined,
  );
  for (const sha of want) {
    if (entry.sha256 !== sha) {
      throw new RuntimeError(
        'admission',
        `sha256 mismatch: the Seed store's ${pin.id}@${pin.version} is ${entry.sha256 ?? 'unpublished'}, the pin is ${sha}`,
        { field: 'workload.sha256' },
      );
    }
  }
  return {
    runtime: SEED_RUNTIME_ID,
    variant: storePinRef(seedStorePin(pin)),
    arch: SEED_ARCH,
    emulated: false,
    notes: [`the Seed store's ${pin.id}@${entry.version} matches the operator pin`],
  };
}
