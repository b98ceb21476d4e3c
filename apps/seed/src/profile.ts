import { mkdirSync } from 'node:fs';
import { writeFileAtomic } from '@heddle/envelope';
import { z } from 'zod';
import { badInput } from './cli-error.js';
import { profilePath } from './home.js';
import { readJsonFile } from './json-file.js';

/** `seed.json`: how to reach one Seed. */
export interface SeedProfile {
  readonly version: 1;
  /** The Seed's base URL (`https://seed.local:8443`, `http://169.254.42.1`). */
  readonly url: string;
  /** SHA-256 of the Seed certificate's SubjectPublicKeyInfo (64 hex); null for plain HTTP. */
  readonly spki: string | null;
  /** Plain HTTP allowed (only to the USB link 169.254.42.1 or loopback; the client enforces that). */
  readonly allow_plain_http: boolean;
  /** The name this tool pairs as. */
  readonly client_name: string;
}

/** Schema of `seed.json`. */
export const SeedProfileSchema: z.ZodType<SeedProfile> = z.strictObject({
  version: z.literal(1),
  url: z.string().min(1).max(512),
  spki: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
    .nullable(),
  allow_plain_http: z.boolean(),
  client_name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/, 'expected 1..64 letters, digits, space, . _ -'),
});

/** The default client name this tool pairs as. */
export const DEFAULT_CLIENT_NAME = 'heddle-seed';

/** Reads `seed.json` of `home`; `not_initialised` (exit 3) when missing, `profile_invalid` when bad. */
export function readProfile(home: string): SeedProfile {
  const p = readJsonFile(profilePath(home, 'profile'), SeedProfileSchema, 'profile_invalid', true);
  if (p === undefined) {
    throw badInput(
      'not_initialised',
      `no Seed profile in ${home} (run: heddle-seed init --url <url> --home ${home})`,
      'home',
    );
  }
  return p;
}

/** Writes `seed.json` atomically (creating the directory, mode 0700). */
export function writeProfile(home: string, profile: SeedProfile): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileAtomic(profilePath(home, 'profile'), `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o644 });
}
