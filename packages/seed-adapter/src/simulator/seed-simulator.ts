import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SeedError } from '../errors.js';
import type { StoreCog } from '../seed-api.js';
import { spkiOfPem } from '../test-tls.js';
import { readJsonBody, sendGarbage, sendHuge, sendJson } from './sim-http.js';
import { route, type SimKnobs } from './sim-routes.js';
import { SimRefusal, SimState } from './sim-state.js';
import {
  API_PREFIX,
  DEFAULT_CATALOG,
  type NoAnswerMode,
  type SeedSimulatorOptions,
  type SimInstalledCog,
  type SimRequest,
} from './sim-types.js';

const MAX_REQUEST_LOG = 10_000;
const BEARER_RE = /^Bearer ([\x21-\x7e]{1,512})$/i;
const TOKEN_RE = /^[\x21-\x7e]{1,512}$/;

type Server = ReturnType<typeof createHttpServer>;

/**
 * A simulated Cognitum Seed: a real node:http / node:https server following the Seed's documented API
 * (the Seed's public API documents (see docs/seed.md, "The simulator"), point by point): reads open, writes need a paired client's token
 * (`Authorization: Bearer`, or `X-Pairing-Token`), 403 `{error: "not paired..."}` otherwise; installs
 * auto-start and are idempotent (`already_installed`); at most 3 cogs run; a console run takes one of
 * the manifest's `allowed_commands` and falls back to synthetic data, with a warning line, when the
 * sensor feed is taken; logs keep 1000 lines; config starts `{}` and PUT merges. Knobs for tests.
 * Not a security boundary.
 */
export class SeedSimulator {
  /** The base URL (`http://127.0.0.1:port` or `https://...`). */
  readonly url: string;
  /** Hex SHA-256 of the certificate's SubjectPublicKeyInfo (HTTPS only). */
  readonly spki: string | undefined;
  private readonly server: Server;
  private readonly state: SimState;
  private readonly knobs: SimKnobs;
  private readonly log: SimRequest[] = [];
  private readonly garbage = new Set<string>();
  private readonly huge = new Set<string>();

  private constructor(
    server: Server,
    url: string,
    spki: string | undefined,
    state: SimState,
    options: SeedSimulatorOptions,
  ) {
    this.server = server;
    this.url = url;
    this.spki = spki;
    this.state = state;
    this.knobs = {
      installDelayMs: options.installDelayMs ?? 200,
      failNextInstall: undefined,
      noAnswerNextInstall: undefined,
      failNextConsole: undefined,
      afterNextConsole: undefined,
      pairButtonOnly: false,
      pairTokenField: 'token',
      unauthorizedStatus: options.unauthorizedStatus ?? 403,
      readsNeedToken: options.readsNeedToken === true,
    };
  }

  /** The Seed's device id (a UUID, as `GET /status` and `GET /identity` report it). */
  get deviceId(): string {
    return this.state.deviceId;
  }

  /** Starts a simulator listening on `host:port` (default 127.0.0.1 and a free port). */
  static async start(options: SeedSimulatorOptions = {}): Promise<SeedSimulator> {
    const cap = options.concurrencyCap ?? 3;
    if (!Number.isInteger(cap) || cap < 1) {
      throw new SeedError('invalid_argument', 'concurrencyCap must be a positive integer', {
        field: 'concurrencyCap',
      });
    }
    const state = new SimState({
      catalog: [...(options.catalog ?? DEFAULT_CATALOG)],
      manifests: options.manifests ?? {},
      cap,
      capStatus: options.capStatus ?? 409,
      tickMs: options.tickMs ?? 200,
      pairWindowSecs: options.pairWindowSecs ?? 30,
      tokens: options.tokens ?? [],
    });
    if (options.pairWindowOpen === true) state.openWindow();
    let sim: SeedSimulator | undefined;
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      if (sim === undefined) {
        sendJson(res, 503, { error: 'starting' });
        return;
      }
      sim.onRequest(req, res).catch(() => sendJson(res, 500, { error: 'internal error' }));
    };
    // cast (below): an https server is a net.Server with the same listen/close API
    const server: Server = options.https
      ? (createHttpsServer(
          { cert: options.https.cert, key: options.https.key },
          handler,
          // cast: an https server is a net.Server with the same listen/close API
        ) as unknown as Server)
      : createHttpServer(handler);
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // cast: a listening TCP server has an AddressInfo address
    const port = (server.address() as AddressInfo).port;
    const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
    const urlHost = shown.includes(':') ? `[${shown}]` : shown;
    const scheme = options.https ? 'https' : 'http';
    const spki = options.https ? spkiOfPem(options.https.cert) : undefined;
    sim = new SeedSimulator(server, `${scheme}://${urlHost}:${port}`, spki, state, options);
    return sim;
  }

  /** Stops the tickers, drops every connection (hanging ones included) and closes the server. */
  async close(): Promise<void> {
    this.state.shutdown();
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Replaces the store catalog (version drift: list a newer version than an operator pinned). */
  setCatalog(cogs: readonly StoreCog[]): void {
    this.state.catalog = [...cogs];
  }

  /** Sets how long an install takes from now on. */
  setInstallDelay(ms: number): void {
    this.knobs.installDelayMs = ms;
  }

  /** The next install fails (500 `{error: message}`) after its delay, installing nothing. */
  failNextInstall(message: string): void {
    this.knobs.failNextInstall = message;
  }

  /**
   * The next install happens (after its delay) but its answer never comes: the connection is destroyed
   * (`destroy`, default) or left open without an answer until the client gives up (`hang`); with
   * `early` the connection is destroyed at once and the install completes later, after its delay.
   */
  installWithoutAnswer(mode: NoAnswerMode = 'destroy'): void {
    this.knobs.noAnswerNextInstall = mode;
  }

  /** The next console run exits 1 with `message` on its errors. */
  failNextConsole(message: string): void {
    this.knobs.failNextConsole = message;
  }

  /**
   * When on, something other than a cog holds the sensor feed (UDP 5006), as a relay would: every
   * console run falls back to synthetic data, with the warning line.
   */
  holdFeed(on: boolean): void {
    this.state.feedHeldOutside = on;
  }

  /**
   * The Seed goes away right after it answers the next console run: it stops listening and drops every
   * connection (a Seed unplugged mid-run). {@link close} still works after.
   */
  vanishAfterNextConsole(): void {
    this.knobs.afterNextConsole = () => {
      this.server.close();
      this.server.closeAllConnections();
    };
  }

  /** The field the pairing answer carries the token in (`token` by default; the Node SDK's `pairing_token`). */
  setPairTokenField(field: 'token' | 'pairing_token'): void {
    this.knobs.pairTokenField = field;
  }

  /** Whether installs auto-start (default true, as the Seed does). */
  setAutoStart(on: boolean): void {
    this.state.autoStart = on;
  }

  /** Answers a 200 non-JSON body on this exact path (any method), until {@link clearFaults}. */
  garbageOn(path: string): void {
    this.garbage.add(path);
  }

  /** Answers a 5 MiB body (chunked, no length) on this exact path, until {@link clearFaults}. */
  hugeOn(path: string): void {
    this.huge.add(path);
  }

  /** Removes every garbage/huge fault. */
  clearFaults(): void {
    this.garbage.clear();
    this.huge.clear();
  }

  /** Opens a pairing window (as the Seed's button would). */
  openPairWindow(): void {
    this.state.openWindow();
  }

  /** Closes the pairing window. */
  closePairWindow(): void {
    this.state.closeWindow();
  }

  /**
   * When on, `POST /api/v1/pair/window` is refused (403) unless the caller holds a valid token (as from
   * WiFi): only {@link openPairWindow} (the button) opens one.
   */
  requirePairButton(on: boolean): void {
    this.knobs.pairButtonOnly = on;
  }

  /** Forgets the client of a token (or every client): the Seed then refuses that token (403). */
  revokeTokens(token?: string): void {
    this.state.revoke(token);
  }

  /** Pairs a new client directly (no window needed) and returns its token (`seed_...`). */
  addToken(): string {
    return this.state.addToken();
  }

  /** The requests seen so far, oldest first (method, path, whether a token was sent, status). */
  get requests(): readonly SimRequest[] {
    return this.log.map((r) => ({ ...r }));
  }

  /** Forgets the request log. */
  clearRequests(): void {
    this.log.length = 0;
  }

  /** A snapshot of the installed cogs, with their configs. */
  installed(): SimInstalledCog[] {
    return this.state.snapshot();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://seed.invalid');
    const path = url.pathname;
    const token = tokenOf(req);
    const entry: SimRequest = { method, path, token: token !== undefined };
    this.log.push(entry);
    if (this.log.length > MAX_REQUEST_LOG) this.log.shift();
    res.once('finish', () => {
      entry.status = res.statusCode;
    });
    if (this.garbage.has(path)) return sendGarbage(res);
    if (this.huge.has(path)) return sendHuge(res);
    try {
      if (!path.startsWith(`${API_PREFIX}/`)) throw new SimRefusal(404, 'no such route');
      const sub = path.slice(API_PREFIX.length);
      const answer = await route(this.state, this.knobs, {
        method,
        path: sub,
        query: url.searchParams,
        authorized: token !== undefined && this.state.checkToken(token),
        body: () => readJsonBody(req),
      });
      if (answer.kind === 'json') {
        if (answer.after !== undefined) res.once('finish', answer.after);
        return sendJson(res, answer.status, answer.body);
      }
      if (answer.mode === 'destroy') req.socket.destroy();
      // 'hang': no answer; close() drops the connection.
    } catch (e) {
      if (e instanceof SimRefusal) return sendJson(res, e.status, { error: e.message }, e.status === 413);
      sendJson(res, 500, { error: 'internal error' });
    }
  }
}

/** The token a request carries: `Authorization: Bearer <t>`, else `X-Pairing-Token: <t>` (both documented). */
function tokenOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  const m = auth === undefined ? null : BEARER_RE.exec(auth);
  if (m !== null) return m[1];
  const x = req.headers['x-pairing-token'];
  return typeof x === 'string' && TOKEN_RE.test(x) ? x : undefined;
}
