import { RuntimeError } from '../errors.js';
import { type ContainerEngine, runEngineOk } from './container-engine.js';
import { jsonObject, parseJsonRecords } from './container-inspect.js';

/** What adopt requires of a container: what `create` set. */
export interface AdoptExpectation {
  /** The verified image reference (by digest). */
  readonly image: string;
  readonly network: string;
  readonly user: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? null));

/**
 * Refuses (`admission`, field `container`) to adopt a container that is not what `create` makes: its
 * image is not the verified digest reference, or its `NetworkMode`, `ReadonlyRootfs`, `User` or
 * `CapDrop` (must hold `ALL`) differ. A container with the label but other settings is not taken over.
 */
export async function checkAdoptedContainer(
  engine: ContainerEngine,
  name: string,
  want: AdoptExpectation,
): Promise<void> {
  const r = await runEngineOk(engine, ['inspect', name], { timeoutMs: 30_000 });
  const c = parseJsonRecords(r.stdout)[0] ?? {};
  const config = jsonObject(c.Config);
  const host = jsonObject(c.HostConfig);
  const capDrop = Array.isArray(host.CapDrop) ? host.CapDrop.map(String) : [];
  const wrong: string[] = [];
  if (config.Image !== want.image) wrong.push(`image ${str(config.Image)} (expected ${want.image})`);
  if (host.NetworkMode !== want.network)
    wrong.push(`network ${str(host.NetworkMode)} (expected ${want.network})`);
  if (host.ReadonlyRootfs !== true) wrong.push('root file system not read-only');
  if (config.User !== want.user) wrong.push(`user ${str(config.User)} (expected ${want.user})`);
  if (!capDrop.some((cap) => cap.toUpperCase() === 'ALL')) wrong.push(`CapDrop ${str(host.CapDrop)}`);
  if (wrong.length > 0) {
    throw new RuntimeError('admission', `container: refusing to adopt ${name}: ${wrong.join('; ')}`, {
      field: 'container',
    });
  }
}
