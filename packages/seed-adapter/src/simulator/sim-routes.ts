import { parseCogId, parseConfig, parseConsole, parseInstall, parseLines, parsePair } from './sim-bodies.js';
import { SimRefusal as Refusal, type SimState } from './sim-state.js';
import { type NoAnswerMode, SIM_FIRMWARE, SIM_REGISTRY_VERSION } from './sim-types.js';

/** The knobs a route reads (owned by the simulator). */
export interface SimKnobs {
  installDelayMs: number;
  failNextInstall: string | undefined;
  noAnswerNextInstall: NoAnswerMode | undefined;
  failNextConsole: string | undefined;
  /** Called after the next console answer is sent (the simulator goes away then). */
  afterNextConsole: (() => void) | undefined;
  /** When set, `POST /pair/window` needs a valid token: otherwise only the Seed's button opens a window. */
  pairButtonOnly: boolean;
  /** The field the pairing answer carries the token in (`token`, as fw 0.22.7; the Node SDK expects `pairing_token`). */
  pairTokenField: 'token' | 'pairing_token';
  readonly unauthorizedStatus: 401 | 403;
  readonly readsNeedToken: boolean;
}

/** What a route answers: JSON, or no answer at all (the install-without-answer knob). */
export type SimAnswer =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown; readonly after?: () => void }
  | { readonly kind: 'drop'; readonly mode: NoAnswerMode };

/** The parts of a request a route needs. */
export interface SimCall {
  readonly method: string;
  /** Path below the API prefix, e.g. `/apps/air-quality/logs`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Whether the request carries the token of a paired client. */
  readonly authorized: boolean;
  /** Reads and strictly parses the body (see sim-http.ts). */
  readonly body: () => Promise<unknown>;
}

const ok = (body: unknown, status = 200): SimAnswer => ({ kind: 'json', status, body });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function notAllowed(method: string, path: string): Refusal {
  return new Refusal(405, `method ${method} not allowed on ${path}`);
}

/** Refuses a call without a paired client's token: 403 (or 401) `{error}` containing "not paired". */
function needToken(knobs: SimKnobs, call: SimCall): void {
  if (!call.authorized) {
    throw new Refusal(knobs.unauthorizedStatus, 'not paired: this call needs the token of a paired client');
  }
}

async function install(state: SimState, knobs: SimKnobs, call: SimCall): Promise<SimAnswer> {
  needToken(knobs, call);
  const { id, config } = parseInstall(await call.body());
  if (state.storeCog(id) === undefined) throw new Refusal(404, 'cog not found in registry or binary missing');
  if (state.has(id)) return ok({ status: 'already_installed' });
  if (state.autoStart) state.checkCap(`install of ${id}`);
  if (knobs.noAnswerNextInstall === 'early') {
    knobs.noAnswerNextInstall = undefined;
    const delay = knobs.installDelayMs;
    void sleep(delay).then(() => {
      const cog = state.storeCog(id);
      if (cog === undefined || state.has(id)) return;
      try {
        state.install(cog, config);
      } catch {
        // the cap filled meanwhile: nothing installed
      }
    });
    return { kind: 'drop', mode: 'destroy' };
  }
  await sleep(knobs.installDelayMs);
  const failure = knobs.failNextInstall;
  knobs.failNextInstall = undefined;
  if (failure !== undefined) throw new Refusal(500, failure);
  if (state.has(id)) return ok({ status: 'already_installed' });
  // The store may have changed during the (slow) install: install whatever it lists now.
  const cog = state.storeCog(id);
  if (cog === undefined) throw new Refusal(404, 'cog not found in registry or binary missing');
  state.install(cog, config);
  const drop = knobs.noAnswerNextInstall;
  knobs.noAnswerNextInstall = undefined;
  if (drop !== undefined) return { kind: 'drop', mode: drop };
  return ok({ status: 'installed' });
}

async function appRoute(
  state: SimState,
  knobs: SimKnobs,
  call: SimCall,
  id: string,
  action: string,
): Promise<SimAnswer> {
  const { method, path } = call;
  const read = (): void => {
    if (method !== 'GET') throw notAllowed(method, path);
    if (knobs.readsNeedToken) needToken(knobs, call);
  };
  switch (action) {
    case '':
      if (method !== 'DELETE') throw notAllowed(method, path);
      needToken(knobs, call);
      state.uninstall(id);
      return ok({ ok: true });
    case '/start':
      if (method !== 'POST') throw notAllowed(method, path);
      needToken(knobs, call);
      return ok({ ok: true, pid: state.start(id) });
    case '/stop':
      if (method !== 'POST') throw notAllowed(method, path);
      needToken(knobs, call);
      state.stop(id);
      return ok({ ok: true });
    case '/logs':
      read();
      return ok(state.logs(id, parseLines(call.query.get('lines'))));
    case '/manifest':
      read();
      return ok(state.manifest(id));
    case '/console': {
      if (method !== 'POST') throw notAllowed(method, path);
      needToken(knobs, call);
      const { command } = parseConsole(await call.body());
      state.get(id);
      const fail = knobs.failNextConsole;
      knobs.failNextConsole = undefined;
      const after = knobs.afterNextConsole;
      knobs.afterNextConsole = undefined;
      return { ...ok(state.console(id, command, fail)), ...(after === undefined ? {} : { after }) };
    }
    case '/config':
      if (method === 'GET') {
        read();
        return ok(state.config(id));
      }
      if (method !== 'PUT') throw notAllowed(method, path);
      needToken(knobs, call);
      state.get(id);
      return ok(state.mergeConfig(id, parseConfig(await call.body())));
    default:
      throw new Refusal(404, `no route ${path}`);
  }
}

/** Routes one call (below the prefix). Throws {@link Refusal} for an `{error}` answer. */
export async function route(state: SimState, knobs: SimKnobs, call: SimCall): Promise<SimAnswer> {
  const { method, path } = call;
  const only = (m: string): void => {
    if (method !== m) throw notAllowed(method, path);
  };
  switch (path) {
    case '/status':
      only('GET');
      return ok({
        device_id: state.deviceId,
        uptime_secs: state.uptimeSecs(),
        epoch: state.epoch,
        total_vectors: 0,
        deleted_vectors: 0,
        file_size_bytes: 4096,
        dimension: 8,
        paired: state.clientCount() > 0,
        roles: ['custody', 'optimizer', 'delivery'],
        witness_chain_length: state.epoch,
      });
    case '/identity':
      only('GET');
      return ok({
        device_id: state.deviceId,
        public_key: state.publicKey,
        firmware_version: SIM_FIRMWARE,
        epoch: state.epoch,
        dimension: 8,
      });
    case '/pair/status':
      only('GET');
      return ok(pairStatus(state));
    case '/pair/window':
      only('POST');
      await call.body();
      if (knobs.pairButtonOnly && !call.authorized) {
        throw new Refusal(
          403,
          'the pairing window opens from localhost, USB or the setup AP, with a paired token, or by the button',
        );
      }
      state.openWindow();
      return ok({ pairing_window_open: true, window_remaining_secs: state.windowLeft() });
    case '/pair': {
      only('POST');
      const { client_name } = parsePair(await call.body());
      if (state.windowLeft() === 0) throw new Refusal(knobs.unauthorizedStatus, 'pairing window is closed');
      const token = state.addClient(client_name);
      return ok({ [knobs.pairTokenField]: token, expires: null, permissions: ['read', 'write', 'admin'] });
    }
    case '/apps/available':
      only('GET');
      return ok({ version: SIM_REGISTRY_VERSION, cogs: state.catalog });
    case '/apps': {
      only('GET');
      const installed = state.list();
      return ok({ installed, count: installed.length });
    }
    case '/apps/install':
      only('POST');
      return install(state, knobs, call);
  }
  const unpair = /^\/pair\/([^/]{1,64})$/.exec(path);
  if (unpair !== null) {
    only('DELETE');
    needToken(knobs, call);
    const name = decodeURIComponent(unpair[1] ?? '');
    if (!state.removeClient(name)) throw new Refusal(404, `no paired client ${name}`);
    return ok({ ok: true });
  }
  const m = /^\/apps\/([^/]+)(\/[a-z]+)?$/.exec(path);
  if (m === null) throw new Refusal(404, `no route ${path}`);
  return appRoute(state, knobs, call, parseCogId(m[1] ?? ''), m[2] ?? '');
}

/** `GET /pair/status`. */
export function pairStatus(state: SimState): Record<string, unknown> {
  const left = state.windowLeft();
  return {
    paired: state.clientCount() > 0,
    client_count: state.clientCount(),
    pairing_window_open: left > 0,
    window_remaining_secs: left,
  };
}
