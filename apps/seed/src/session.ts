import { existsSync } from 'node:fs';
import { loadToken, SeedClient } from '@heddle/seed-adapter';
import { badInput } from './cli-error.js';
import { homeDir, profilePath } from './home.js';
import type { CliIo } from './io.js';
import { readProfile, type SeedProfile } from './profile.js';

/** A profile opened for one command: where it lives, how to reach the Seed, and a client. */
export interface SeedSession {
  readonly home: string;
  readonly profile: SeedProfile;
  /** The client, with the token when `withToken` was asked and the profile has one. */
  readonly client: SeedClient;
  /** Whether the client carries a token. */
  readonly paired: boolean;
}

/**
 * Opens the profile of `homeFlag` and builds a pinned client. With `withToken: 'required'` the token
 * file must exist (`not_paired`, exit 3, naming `heddle-seed pair`); with `'optional'` it is used when
 * present. A loaded token is registered with `io.secret` so that no output can carry it.
 */
export function openSession(
  homeFlag: string | undefined,
  io: CliIo,
  withToken: 'required' | 'optional' | 'none',
): SeedSession {
  const home = homeDir(homeFlag, io);
  const profile = readProfile(home);
  const tokenPath = profilePath(home, 'token');
  let token: string | undefined;
  if (withToken === 'required' || (withToken === 'optional' && existsSync(tokenPath))) {
    if (!existsSync(tokenPath)) {
      throw badInput(
        'not_paired',
        `this profile is not paired (run: heddle-seed pair --home ${home})`,
        'token',
      );
    }
    token = loadToken(tokenPath);
    io.secret?.(token);
  }
  return { home, profile, client: clientFor(profile, token), paired: token !== undefined };
}

/** A `SeedClient` for a profile (pinned to its SPKI; plain HTTP only when the profile allows it). */
export function clientFor(profile: SeedProfile, token: string | undefined): SeedClient {
  return new SeedClient({
    url: profile.url,
    ...(profile.spki === null ? {} : { spki: profile.spki }),
    ...(token === undefined ? {} : { token }),
    allowPlainHttp: profile.allow_plain_http,
  });
}
