import type { z } from 'zod';
import {
  AckSchema,
  COG_ID_RE,
  CogConfigSchema,
  CogLogsSchema,
  CogManifestSchema,
  ConsoleResultSchema,
  InstallAnswerSchema,
  InstalledListSchema,
  PairAnswerSchema,
  PairStatusSchema,
  SeedIdentitySchema,
  SeedStatusSchema,
  StoreListSchema,
} from './api-schemas.js';
import { seedRequest } from './client-http.js';
import { type HttpMethod, type SeedTarget, seedTarget } from './client-target.js';
import { isValidToken, redact } from './credentials.js';
import { SeedError } from './errors.js';
import type {
  CogConfig,
  CogLogs,
  CogManifest,
  ConsoleResult,
  InstalledCog,
  PairStatus,
  SeedApi,
  SeedIdentity,
  SeedStatus,
  StoreCog,
} from './seed-api.js';
import { normalizeSpkiPin } from './spki.js';

/** Options of {@link SeedClient}. */
export interface SeedClientOptions {
  /** `https://host:port` (port defaults to 8443) or `http://host[:port]` (loopback or 169.254.42.1 only). */
  readonly url: string;
  /** Hex SHA-256 of the Seed certificate's SubjectPublicKeyInfo (required for https). */
  readonly spki?: string;
  /** The bearer token from pairing (see `loadToken`); sent only as `Authorization: Bearer`. */
  readonly token?: string;
  /** Allow plain http (only to loopback or the USB link 169.254.42.1). Default false. */
  readonly allowPlainHttp?: boolean;
  /** Timeout of an ordinary call, ms (default 10 000). */
  readonly apiTimeoutMs?: number;
  /** Timeout of an install, ms (default 180 000). */
  readonly installTimeoutMs?: number;
  /** Timeout of a console run, ms (default 30 000). */
  readonly consoleTimeoutMs?: number;
  /** Largest answer accepted, bytes (default 1 MiB); beyond it the connection is cut (`bad_answer`). */
  readonly maxResponseBytes?: number;
}

const MiB = 1024 * 1024;

/** The cog id {@link SeedClient.verifyToken} stops: one no store lists, so the stop changes nothing. */
export const TOKEN_PROBE_ID = 'heddle-token-probe';

/**
 * The Seed API over pinned HTTPS (or plain HTTP on loopback / the USB link when allowed). Every answer
 * is size-bounded, parsed strictly and validated; redirects are refused; paths stay under `/api/v1/`;
 * the token never appears in any error message. Throws `SeedError('invalid_argument' | 'insecure')`
 * from the constructor for bad options.
 */
export class SeedClient implements SeedApi {
  /** The normalized base URL (`https://host:port` or `http://host:port`). */
  readonly url: string;
  readonly #target: SeedTarget;
  readonly #token: string | undefined;
  readonly #options: SeedClientOptions;
  readonly #apiTimeout: number;
  readonly #installTimeout: number;
  readonly #consoleTimeout: number;
  readonly #maxBytes: number;

  constructor(options: SeedClientOptions) {
    if (options.token !== undefined && !isValidToken(options.token)) {
      throw new SeedError('invalid_argument', 'token is not a well-formed bearer token', { field: 'token' });
    }
    const pin = options.spki === undefined ? undefined : normalizeSpkiPin(options.spki);
    this.#target = seedTarget(options.url, pin, options.allowPlainHttp === true);
    this.url = this.#target.origin;
    this.#token = options.token;
    this.#options = options;
    this.#apiTimeout = positive(options.apiTimeoutMs, 10_000, 'apiTimeoutMs');
    this.#installTimeout = positive(options.installTimeoutMs, 180_000, 'installTimeoutMs');
    this.#consoleTimeout = positive(options.consoleTimeoutMs, 30_000, 'consoleTimeoutMs');
    this.#maxBytes = positive(options.maxResponseBytes, MiB, 'maxResponseBytes');
  }

  /** A client for the same Seed with another token (after pairing). */
  withToken(token: string): SeedClient {
    return new SeedClient({ ...this.#options, token });
  }

  /** Whether this client holds a token. */
  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  status(): Promise<SeedStatus> {
    return this.#call('GET', '/api/v1/status', SeedStatusSchema);
  }

  identity(): Promise<SeedIdentity> {
    return this.#call('GET', '/api/v1/identity', SeedIdentitySchema);
  }

  pairStatus(): Promise<PairStatus> {
    return this.#call('GET', '/api/v1/pair/status', PairStatusSchema);
  }

  /**
   * Opens a pairing window (its answer is not documented: read `pairStatus` after). A Seed that opens
   * windows only from a trusted path or by its button answers 403: that is a `seed_error` here.
   */
  async openPairWindow(): Promise<void> {
    await this.#call('POST', '/api/v1/pair/window', AckSchema, {}, this.#apiTimeout, true);
  }

  async pair(clientName: string): Promise<string> {
    if (typeof clientName !== 'string' || !/^[\x20-\x7e]{1,64}$/.test(clientName)) {
      throw new SeedError('invalid_argument', 'clientName must be 1-64 printable ASCII characters', {
        field: 'clientName',
      });
    }
    const answer = await this.#call('POST', '/api/v1/pair', PairAnswerSchema, { client_name: clientName });
    return answer.token;
  }

  async available(): Promise<readonly StoreCog[]> {
    return (await this.#call('GET', '/api/v1/apps/available', StoreListSchema)).cogs;
  }

  async installed(): Promise<readonly InstalledCog[]> {
    return (await this.#call('GET', '/api/v1/apps', InstalledListSchema)).installed;
  }

  async install(id: string): Promise<'installed' | 'already_installed'> {
    const body = { id: cogId(id) };
    return this.#call('POST', '/api/v1/apps/install', InstallAnswerSchema, body, this.#installTimeout);
  }

  async start(id: string): Promise<void> {
    await this.#call('POST', `${appPath(id)}/start`, AckSchema, {});
  }

  async stop(id: string): Promise<void> {
    await this.#call('POST', `${appPath(id)}/stop`, AckSchema, {});
  }

  async uninstall(id: string): Promise<void> {
    await this.#call('DELETE', appPath(id), AckSchema);
  }

  async logs(id: string, lines: number): Promise<CogLogs> {
    if (!Number.isSafeInteger(lines) || lines < 1 || lines > 10_000) {
      throw new SeedError('invalid_argument', 'lines must be an integer from 1 to 10000', { field: 'lines' });
    }
    return this.#call('GET', `${appPath(id)}/logs?lines=${lines}`, CogLogsSchema);
  }

  async console(id: string, command: string): Promise<ConsoleResult> {
    const path = `${appPath(id)}/console`;
    if (
      typeof command !== 'string' ||
      command.length === 0 ||
      command.length > 4096 ||
      command.includes('\u0000')
    ) {
      throw new SeedError('invalid_argument', 'command must be 1-4096 characters without NUL', {
        field: 'command',
      });
    }
    return this.#call('POST', path, ConsoleResultSchema, { command }, this.#consoleTimeout);
  }

  async manifest(id: string): Promise<CogManifest> {
    return this.#call('GET', `${appPath(id)}/manifest`, CogManifestSchema);
  }

  /**
   * Checks the token with a call the Seed authenticates but that changes nothing: `POST
   * /api/v1/apps/${TOKEN_PROBE_ID}/stop` (a stop of a cog no store lists). The Seed checks the token of
   * every write before it looks for the app: a token it refuses is `not_paired` (401/403); a token it
   * accepts gets 404 (no such app) or 2xx. Reads are served without a token, so they prove nothing.
   */
  async verifyToken(): Promise<void> {
    if (this.#token === undefined) {
      throw new SeedError('not_paired', 'no token: pair with the Seed first');
    }
    try {
      await this.#call('POST', `${appPath(TOKEN_PROBE_ID)}/stop`, AckSchema, {});
    } catch (err) {
      if (err instanceof SeedError && err.code === 'seed_error' && err.status === 404) return;
      throw err;
    }
  }

  async getConfig(id: string): Promise<CogConfig> {
    return this.#call('GET', `${appPath(id)}/config`, CogConfigSchema);
  }

  async setConfig(id: string, config: CogConfig): Promise<void> {
    const path = `${appPath(id)}/config`;
    const parsed = CogConfigSchema.safeParse(config);
    if (!parsed.success) {
      throw new SeedError('invalid_argument', 'config must be a flat object of at most 256 scalar values', {
        field: 'config',
      });
    }
    await this.#call('PUT', path, AckSchema, parsed.data);
  }

  /**
   * A raw call to any path under `/api/v1/` (for endpoints this client has no method for), returning
   * the parsed JSON (or `null` for an empty answer). The path is checked (`invalid_argument`).
   */
  request(method: HttpMethod, path: string, body?: unknown): Promise<unknown> {
    return this.#call(method, path, AckSchema, body);
  }

  async #call<T>(
    method: HttpMethod,
    path: string,
    schema: z.ZodType<T>,
    body?: unknown,
    timeoutMs: number = this.#apiTimeout,
    forbiddenIsRefusal = false,
  ): Promise<T> {
    let value: T;
    try {
      value = await seedRequest(this.#target, {
        method,
        path,
        body,
        schema,
        timeoutMs,
        maxBytes: this.#maxBytes,
        token: this.#token,
        forbiddenIsRefusal,
      });
    } catch (err) {
      throw scrub(err, this.#token);
    }
    // A Seed that echoes the token back (in an extra field, a log line) does not get it into our output.
    const token = this.#token;
    if (token === undefined || !JSON.stringify(value ?? null).includes(token)) return value;
    // cast: redactDeep keeps the shape of the value it copies
    return redactDeep(value, token) as T;
  }
}

/** Redacts the token in every string (keys included) of a parsed JSON answer. */
function redactDeep(value: unknown, token: string): unknown {
  if (typeof value === 'string') return redact(value, token);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, token));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const entry = { value: redactDeep(v, token), enumerable: true, writable: true, configurable: true };
      Object.defineProperty(out, redact(k, token), entry);
    }
    return out;
  }
  return value;
}

/** A SeedError whose message went through `redact`; anything else becomes `unreachable`. */
function scrub(err: unknown, token: string | undefined): SeedError {
  if (err instanceof SeedError) {
    if (token === undefined || !err.message.includes(token)) return err;
    return new SeedError(err.code, redact(err.message, token), {
      ...(err.field === undefined ? {} : { field: err.field }),
      ...(err.status === undefined ? {} : { status: err.status }),
    });
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new SeedError('unreachable', redact(`Seed request failed: ${msg.slice(0, 300)}`, token));
}

function cogId(id: string): string {
  if (typeof id !== 'string' || !COG_ID_RE.test(id)) {
    throw new SeedError('invalid_argument', 'id must match [a-z0-9][a-z0-9._-]{0,63}', { field: 'id' });
  }
  return id;
}

function appPath(id: string): string {
  return `/api/v1/apps/${encodeURIComponent(cogId(id))}`;
}

function positive(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new SeedError('invalid_argument', `${field} must be a positive integer`, { field });
  }
  return value;
}
