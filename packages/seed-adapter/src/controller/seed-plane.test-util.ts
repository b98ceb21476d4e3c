// A real control plane with the Seed's driver, for this directory's tests.

import { openPlane, type TestPlane, tempDir } from '@heddle/control-plane/testing';
import type { Policy } from '@heddle/gate';
import { seedDriver } from './seed-driver.js';

/** `openPlane` of `@heddle/control-plane/testing`, with {@link seedDriver} registered. */
export function openSeedPlane(
  dir: string = tempDir(),
  config: Parameters<typeof openPlane>[1] = {},
  now?: () => number,
  policy?: Policy,
): Promise<TestPlane> {
  return openPlane(dir, config, now, {
    drivers: [seedDriver()],
    ...(policy === undefined ? {} : { policy }),
  });
}
