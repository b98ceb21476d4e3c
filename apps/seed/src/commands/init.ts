import { existsSync } from 'node:fs';
import { requiredString } from '@heddle/cli-kit';
import { normalizeSpkiPin } from '@heddle/seed-adapter';
import { parseSeedArgs } from '../args.js';
import { badInput, CliError, ExitCode } from '../cli-error.js';
import { INIT } from '../command-defs.js';
import { homeDir, profilePath } from '../home.js';
import { type CliIo, emit } from '../io.js';
import { peerSpki } from '../peer-spki.js';
import { DEFAULT_CLIENT_NAME, type SeedProfile, SeedProfileSchema, writeProfile } from '../profile.js';
import { keyValues } from '../table.js';

/** Plain HTTP is allowed only to these: the Seed's USB link address and loopback. */
export function isLocalLink(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === '169.254.42.1' || h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function parseUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badInput('invalid_argument', `--url: ${JSON.stringify(raw)} is not a URL`, 'url');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw badInput(
      'invalid_argument',
      '--url: expected an https:// (or, on the USB link, http://) URL',
      'url',
    );
  }
  if (
    u.username !== '' ||
    u.password !== '' ||
    u.search !== '' ||
    u.hash !== '' ||
    (u.pathname !== '/' && u.pathname !== '')
  ) {
    throw badInput(
      'invalid_argument',
      '--url: expected only scheme, host and port (no path, query or credentials)',
      'url',
    );
  }
  return u;
}

/**
 * `heddle-seed init --url <url> [--pin-spki <hex>] [--allow-plain-http]`: writes `seed.json`. An https
 * Seed needs its SPKI pin: without `--pin-spki` it connects once, shows the certificate's SPKI and
 * refuses (`spki_required`, exit 3) until the operator passes it; with it, it connects once and
 * refuses a certificate with another key (`tls_pin`, exit 1), writing nothing. A plain-http URL needs
 * `--allow-plain-http` and must be the USB link (169.254.42.1) or loopback (`insecure`, exit 3).
 */
export async function init(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(INIT, args);
  const home = homeDir(a.home, io);
  const url = parseUrl(requiredString(a, 'url'));
  if (existsSync(profilePath(home, 'profile')) && a.booleans.force !== true) {
    throw badInput(
      'profile_exists',
      `${profilePath(home, 'profile')} exists (pass --force to replace it)`,
      'home',
    );
  }
  const plain = url.protocol === 'http:';
  const allowPlain = a.booleans['allow-plain-http'] === true;
  let spki: string | null = null;
  if (plain) {
    if (!allowPlain) {
      throw badInput(
        'insecure',
        '--url: plain http needs --allow-plain-http (and only the USB link 169.254.42.1 or loopback)',
        'url',
      );
    }
    if (!isLocalLink(url.hostname)) {
      throw badInput(
        'insecure',
        `--url: plain http is allowed only to the USB link 169.254.42.1 or loopback, not ${url.hostname}`,
        'url',
      );
    }
    if (a.strings['pin-spki'] !== undefined)
      throw badInput('invalid_argument', '--pin-spki: only for https', 'pin-spki');
  } else {
    const given = a.strings['pin-spki'];
    if (given === undefined) {
      const seen = await peerSpki(url);
      throw new CliError(
        'spki_required',
        [
          `the Seed at ${url.host} presented a certificate whose SPKI SHA-256 is`,
          `  ${seen.spki}`,
          `(subject CN=${seen.subject || '-'}, valid to ${seen.validTo || '-'}).`,
          'Check it against the Seed itself (its display, or its USB link), then pin it:',
          `  heddle-seed init --url ${url.origin} --pin-spki ${seen.spki}`,
          'Nothing was written: trust is never implicit.',
        ].join('\n'),
        ExitCode.badInput,
        { field: 'pin-spki', details: { spki: seen.spki, subject: seen.subject, valid_to: seen.validTo } },
      );
    }
    spki = normalizeSpkiPin(given);
    // Check the pin at once: a typo or another device fails here, not at the first real command.
    const seen = await peerSpki(url);
    if (seen.spki !== spki) {
      throw new CliError(
        'tls_pin',
        [
          `the Seed at ${url.host} presented a certificate whose SPKI SHA-256 is`,
          `  ${seen.spki}`,
          `not the --pin-spki given (${spki}). Nothing was written.`,
          'Check the key on the Seed itself (its display, or its USB link): another device, a re-keyed Seed, or someone in the middle.',
        ].join('\n'),
        ExitCode.failed,
        { field: 'pin-spki', details: { spki: seen.spki } },
      );
    }
  }
  const parsed = SeedProfileSchema.safeParse({
    version: 1,
    url: url.origin,
    spki,
    allow_plain_http: plain && allowPlain,
    client_name: a.strings['client-name'] ?? DEFAULT_CLIENT_NAME,
  });
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.map(String).join('.') ?? '';
    throw badInput(
      'invalid_argument',
      `${field.replace('_', '-')}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      field,
    );
  }
  const profile: SeedProfile = parsed.data;
  writeProfile(home, profile);
  emit(io, a.json, { home, ...profile }, () => [
    ...keyValues([
      ['home', home],
      ['url', profile.url],
      ['spki', profile.spki ?? '- (plain http on the local link)'],
      ['client name', profile.client_name],
    ]),
    '',
    `next: heddle-seed pair --home ${home}`,
  ]);
  return ExitCode.ok;
}
