import { z } from 'zod';
import { COG_ID_RE, CogVersionSchema } from './cog.js';
import { PackageError, zodIssue } from './errors.js';
import { hex64 } from './hex.js';

/**
 * A store pin: the operator's statement that a remote store (such as a Cognitum Seed's app store) may
 * install exactly this cog, optionally at exactly this content (SHA-256, as the store publishes it).
 * The second workload source beside signed packages.
 */
export interface StorePin {
  /** The store: a registry name (`[a-z0-9][a-z0-9.-]{0,62}`) or an `https://` URL. */
  registry: string;
  /** The store's cog id. */
  id: string;
  /** The exact version. */
  version: string;
  /** SHA-256 of the store's artifact, 64 lower-case hex characters, when the store publishes it. */
  sha256?: string;
}

const REGISTRY_NAME_RE = /^[a-z0-9][a-z0-9.-]{0,62}$/;

const registrySchema = z
  .string()
  .max(256)
  .refine((r) => REGISTRY_NAME_RE.test(r) || isHttpsUrl(r), {
    message: 'expected a registry name ([a-z0-9][a-z0-9.-]{0,62}) or an https:// URL',
  });

/** Schema of a store pin. */
export const StorePinSchema: z.ZodType<StorePin> = z.strictObject({
  registry: registrySchema,
  id: z.string().regex(COG_ID_RE, 'expected an id matching [a-z0-9][a-z0-9._-]{0,63}'),
  version: CogVersionSchema,
  sha256: hex64().exactOptional(),
});

function isHttpsUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (
      u.protocol === 'https:' && u.username === '' && u.password === '' && u.hash === '' && !/\s/.test(s)
    );
  } catch {
    return false;
  }
}

/** Validates a store pin. Throws `pin_invalid` naming the field (prefixed with `field` when given). */
export function parseStorePin(value: unknown, field = ''): StorePin {
  const r = StorePinSchema.safeParse(value);
  if (!r.success) {
    const issue = zodIssue(r.error, field);
    throw new PackageError('pin_invalid', issue.message, { field: issue.field });
  }
  return r.data;
}

/** Validates a list of pins; two pins for the same registry and id are refused (`pin_invalid`). */
export function parseStorePins(value: unknown): StorePin[] {
  if (!Array.isArray(value))
    throw new PackageError('pin_invalid', 'pins: expected an array', { field: 'pins' });
  const seen = new Set<string>();
  return value.map((v, i) => {
    const pin = parseStorePin(v, `pins[${i}]`);
    const k = `${pin.registry}\n${pin.id}`;
    if (seen.has(k)) {
      throw new PackageError('pin_invalid', `pins[${i}]: ${pin.id} is pinned twice for ${pin.registry}`, {
        field: `pins[${i}]`,
      });
    }
    seen.add(k);
    return pin;
  });
}

/** A stable text reference of a pin: `registry/id@version` (used in logs, the chain and revocations). */
export function storePinRef(pin: StorePin): string {
  return `${pin.registry}/${pin.id}@${pin.version}`;
}

/**
 * True when a store's catalog or installed entry is exactly what the pin allows: same id and version
 * and, when the pin names a SHA-256, the same digest (an entry without a digest then does not match).
 */
export function storeEntryMatchesPin(
  pin: StorePin,
  entry: { id: string; version: string; sha256?: string | undefined },
): boolean {
  if (entry.id !== pin.id || entry.version !== pin.version) return false;
  return pin.sha256 === undefined || entry.sha256 === pin.sha256;
}
