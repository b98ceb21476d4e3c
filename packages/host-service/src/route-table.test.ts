import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { Gate } from '@heddle/gate';
import { NativeRuntime, WasiRuntime, WorkloadHost, type WorkloadRuntime } from '@heddle/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostServiceError } from './errors.js';
import { routeTable } from './route-table.js';
import { OPEN_POLICY, tempDir } from './test-fixtures.js';

/** A real WASI adapter that claims another route (only `.adapter.route` is read by the table). */
class RoutedWasi extends WasiRuntime {
  override readonly route: string;
  constructor(route: string, dataRoot: string) {
    super({ dataRoot });
    this.route = route;
  }
}

let dir: string;
let chain: Chain;
let gate: Gate;

beforeAll(async () => {
  dir = tempDir();
  chain = await openChainFile(join(dir, 'chain.jsonl'));
  gate = new Gate({ policy: OPEN_POLICY, recorder: chain });
});
afterAll(async () => {
  await chain.close();
  rmSync(dir, { recursive: true, force: true });
});

const host = (runtime: WorkloadRuntime): WorkloadHost =>
  new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host', nodeTier: 'paired' });
const wasi = (): WorkloadHost => host(new WasiRuntime({ dataRoot: join(dir, 'instances') }));
const native = (): WorkloadHost =>
  host(
    new NativeRuntime({
      stateDir: join(dir, 'native'),
      dataRoot: join(dir, 'instances'),
      ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
    }),
  );

function configError(fn: () => unknown): HostServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HostServiceError) return err;
    throw err;
  }
  throw new Error('expected a HostServiceError');
}

describe('routeTable', () => {
  it('maps each host under its adapter route', () => {
    const w = wasi();
    const n = native();
    const c = host(new RoutedWasi('container', join(dir, 'instances')));
    const table = routeTable([n, w, c]);
    expect([...table.keys()]).toEqual(['native', 'wasi', 'container']);
    expect(table.get('wasi')).toBe(w);
    expect(table.get('native')).toBe(n);
    expect(table.get('container')).toBe(c);
  });

  it('an empty list is an empty table', () => {
    expect(routeTable([]).size).toBe(0);
  });

  it('accepts any iterable', () => {
    const w = wasi();
    const table = routeTable(new Set([w]));
    expect(table.get('wasi')).toBe(w);
  });

  it('refuses two adapters on one route with invalid_config naming routes', () => {
    const err = configError(() => routeTable([wasi(), native(), wasi()]));
    expect(err.code).toBe('invalid_config');
    expect(err.field).toBe('routes');
    expect(err.message).toContain('wasi');
  });

  it.each(['remote.api', 'Native', '', 'wasi '])('refuses an adapter on the non-cog route %j', (route) => {
    const err = configError(() => routeTable([wasi(), host(new RoutedWasi(route, join(dir, 'instances')))]));
    expect(err).toBeInstanceOf(HostServiceError);
    expect(err.code).toBe('invalid_config');
    expect(err.field).toBe('routes');
    expect(err.message).toContain('is not a cog route');
  });
});
