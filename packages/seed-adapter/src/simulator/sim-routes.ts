import {
  parseCogId,
  parseConfig,
  parseConsole,
  parseEmpty,
  parseInstall,
  parseLines,
  parsePair,
} from './sim-bodies.js';
import { SimRefusal as Refusal, type SimState } from './sim-state.js';
import type { NoAnswerMode } from './sim-types.js';

/** The knobs a route reads (owned by the simulator). */
export interface SimKnobs {
  installDelayMs: number;
  failNextInstall: string | undefined;
  noAnswerNextInstall: NoAnswerMode | undefined;
  /** When set, `POST /pair/window` is refused: the window opens only with the Seed's button. */
  pairButtonOnly: boolean;
  readonly deviceId: string;
}

/** What a route answers: JSON, or no answer at all (the install-without-answer knob). */
export type SimAnswer =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'drop'; readonly mode: NoAnswerMode };

/** The parts of a request a route needs. */
export interface SimCall {
  readonly method: string;
  /** Path below the API prefix, e.g. `/apps/air-quality/logs`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Reads and strictly parses the body (see sim-http.ts). */
  readonly body: () => Promise<unknown>;
}

const ok = (body: unknown, status = 200): SimAnswer => ({ kind: 'json', status, body });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function notAllowed(method: string, path: string): Refusal {
  return new Refusal(405, `method ${method} not allowed on ${path}`);
}

/** Whether a path (below the prefix) needs a paired token. */
export function needsToken(path: string): boolean {
  return path === '/apps' || path.startsWith('/apps/');
}

async function install(state: SimState, knobs: SimKnobs, call: SimCall): Promise<SimAnswer> {
  const { id } = parseInstall(await call.body());
  if (state.storeCog(id) === undefined) throw new Refusal(404, `cog ${id} is not in the store`);
  if (state.has(id)) throw new Refusal(409, `cog ${id} is already installed`);
  if (state.autoStart) state.checkCap(`install of ${id}`);
  await sleep(knobs.installDelayMs);
  const failure = knobs.failNextInstall;
  knobs.failNextInstall = undefined;
  if (failure !== undefined) throw new Refusal(500, failure);
  // The store may have changed during the (slow) install: install whatever it lists now.
  const cog = state.storeCog(id);
  if (cog === undefined) throw new Refusal(404, `cog ${id} is not in the store`);
  const installed = state.install(cog);
  const drop = knobs.noAnswerNextInstall;
  knobs.noAnswerNextInstall = undefined;
  if (drop !== undefined) return { kind: 'drop', mode: drop };
  return ok(installed);
}

function consoleRun(state: SimState, id: string, command: string): SimAnswer {
  state.get(id);
  const other = state.runningIds().find((r) => r !== id);
  if (other !== undefined) throw new Refusal(409, `sensor feed busy: ${other} holds UDP 5006`);
  if (command === 'fail') {
    return ok({ output: [], errors: [`${id}: simulated failure of ${command}`], exit_code: 1 });
  }
  const reading = state.nextReading(id);
  return ok({
    output: [`${id}> ${command}`, JSON.stringify({ cog: id, reading, source: 'console' })],
    errors: [],
    exit_code: 0,
  });
}

async function appRoute(state: SimState, call: SimCall, id: string, action: string): Promise<SimAnswer> {
  const { method, path } = call;
  switch (action) {
    case '':
      if (method !== 'DELETE') throw notAllowed(method, path);
      state.uninstall(id);
      return ok({ id, removed: true });
    case '/start':
    case '/stop':
      if (method !== 'POST') throw notAllowed(method, path);
      parseEmpty(await call.body());
      return ok(action === '/start' ? state.start(id) : state.stop(id));
    case '/logs':
      if (method !== 'GET') throw notAllowed(method, path);
      return ok(state.logs(id, parseLines(call.query.get('lines'))));
    case '/console': {
      if (method !== 'POST') throw notAllowed(method, path);
      const { command } = parseConsole(await call.body());
      return consoleRun(state, id, command);
    }
    case '/config':
      if (method === 'GET') return ok(state.get(id).config);
      if (method !== 'PUT') throw notAllowed(method, path);
      state.get(id);
      return ok(state.setConfig(id, parseConfig(await call.body())));
    default:
      throw new Refusal(404, `no route ${path}`);
  }
}

/** Routes one authorised call (below the prefix). Throws {@link SimRefusal} for an `{error}` answer. */
export async function route(state: SimState, knobs: SimKnobs, call: SimCall): Promise<SimAnswer> {
  const { method, path } = call;
  const only = (m: string): void => {
    if (method !== m) throw notAllowed(method, path);
  };
  switch (path) {
    case '/status':
      only('GET');
      return ok({ firmware: '0.9.3-sim', uptime_secs: state.uptimeSecs(), simulated: true });
    case '/identity':
      only('GET');
      return ok({ device_id: knobs.deviceId, model: 'Cognitum Seed (simulator)' });
    case '/pair/status':
      only('GET');
      return ok(state.pairStatus());
    case '/pair/window':
      only('POST');
      parseEmpty(await call.body());
      if (knobs.pairButtonOnly)
        throw new Refusal(403, 'press the pairing button on the Seed to open a window');
      state.openWindow();
      return ok(state.pairStatus());
    case '/pair':
      only('POST');
      parsePair(await call.body());
      return ok({ token: state.pair() });
    case '/apps/available':
      only('GET');
      return ok({ cogs: state.catalog });
    case '/apps':
      only('GET');
      return ok({ installed: state.list() });
    case '/apps/install':
      only('POST');
      return install(state, knobs, call);
  }
  const m = /^\/apps\/([^/]+)(\/[a-z]+)?$/.exec(path);
  if (m === null) throw new Refusal(404, `no route ${path}`);
  return appRoute(state, call, parseCogId(m[1] ?? ''), m[2] ?? '');
}
