import { isIP } from 'node:net';
import { SeedError } from './errors.js';

/** The HTTP methods of the Seed API. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A checked Seed address (see {@link seedTarget}). */
export interface SeedTarget {
  /** `https://host:port` or `http://host:port`. */
  readonly origin: string;
  readonly secure: boolean;
  /** The address to connect to (no brackets). */
  readonly host: string;
  readonly port: number;
  /** The `Host` header. */
  readonly hostHeader: string;
  /** The SPKI pin (lower-case hex), for https. */
  readonly pin: string | undefined;
}

const USB_LINK = '169.254.42.1';
const PATH_RE = /^\/api\/v1(?:\/[A-Za-z0-9._~%-]+)+$/;
const QUERY_RE = /^[A-Za-z0-9._~%=&-]{0,256}$/;
const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * Checks a Seed base URL: `https:` needs a pin (port defaults to 8443); `http:` is allowed only to a
 * loopback address or the USB link 169.254.42.1, and only with `allowPlainHttp` (else `insecure`).
 * No credentials, path, query or fragment (`invalid_argument`).
 */
export function seedTarget(url: string, pin: string | undefined, allowPlainHttp: boolean): SeedTarget {
  let u: URL;
  try {
    if (typeof url !== 'string' || url.length > 2048) throw new TypeError('not a string');
    u = new URL(url);
  } catch {
    throw new SeedError('invalid_argument', 'url must be https://host:port or http://host[:port]', {
      field: 'url',
    });
  }
  const bare = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (
    u.username !== '' ||
    u.password !== '' ||
    (u.pathname !== '/' && u.pathname !== '') ||
    u.search ||
    u.hash
  ) {
    throw new SeedError('invalid_argument', 'url must hold only a scheme, a host and a port', {
      field: 'url',
    });
  }
  if (u.protocol === 'https:') {
    if (pin === undefined) {
      throw new SeedError('invalid_argument', 'an https Seed needs its SPKI pin (spki)', { field: 'spki' });
    }
    const port = u.port === '' ? 8443 : Number(u.port);
    return target('https', bare, port, pin);
  }
  if (u.protocol !== 'http:') {
    throw new SeedError('invalid_argument', 'url scheme must be https or http', { field: 'url' });
  }
  const loopback = bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
  if (!loopback && bare !== USB_LINK) {
    throw new SeedError(
      'insecure',
      `plain http to ${bare} refused: only loopback or the USB link ${USB_LINK}; use https with a pin`,
      { field: 'url' },
    );
  }
  if (!allowPlainHttp) {
    throw new SeedError('insecure', `plain http to ${bare} needs allowPlainHttp`, { field: 'url' });
  }
  return target('http', bare, u.port === '' ? 80 : Number(u.port), undefined);
}

function target(scheme: 'http' | 'https', bare: string, port: number, pin: string | undefined): SeedTarget {
  const hostHeader = `${isIP(bare) === 6 ? `[${bare}]` : bare}:${port}`;
  const host = bare === 'localhost' ? '127.0.0.1' : bare;
  return { origin: `${scheme}://${hostHeader}`, secure: scheme === 'https', host, port, hostHeader, pin };
}

/** Refuses (`invalid_argument`) a method or path outside `/api/v1/`, dot segments and odd characters. */
export function checkApiPath(method: string, path: string): void {
  const bad = (): never => {
    throw new SeedError('invalid_argument', 'path must be under /api/v1/ without dot segments', {
      field: 'path',
    });
  };
  if (!METHODS.has(method)) {
    throw new SeedError('invalid_argument', 'method must be GET, POST, PUT or DELETE', { field: 'method' });
  }
  if (typeof path !== 'string' || path.length > 1024) bad();
  const q = path.indexOf('?');
  const p = q < 0 ? path : path.slice(0, q);
  if (!PATH_RE.test(p) || !QUERY_RE.test(q < 0 ? '' : path.slice(q + 1))) bad();
  for (const seg of p.split('/').slice(1)) {
    let d = '';
    try {
      d = decodeURIComponent(seg);
    } catch {
      bad();
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters on purpose
    if (d === '.' || d === '..' || /[/\\\u0000-\u001f]/.test(d)) bad();
  }
}
