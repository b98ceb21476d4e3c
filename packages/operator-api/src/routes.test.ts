import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchRoute, OPERATOR_ROUTES, ROUTE_NAMES, routePath } from './routes.js';

const segments = (path: string): string[] => path.split('/').slice(1).map(decodeURIComponent);

describe('the route table', () => {
  it('names every route once, and no two routes share a method and path', () => {
    expect(new Set(ROUTE_NAMES).size).toBe(ROUTE_NAMES.length);
    expect([...ROUTE_NAMES].sort()).toEqual(Object.keys(OPERATOR_ROUTES).sort());
    const keys = ROUTE_NAMES.map((n) => `${OPERATOR_ROUTES[n].method} ${OPERATOR_ROUTES[n].path.join('/')}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('GET and DELETE routes take no body; POST routes take one', () => {
    for (const n of ROUTE_NAMES) {
      const r = OPERATOR_ROUTES[n];
      expect(r.body === null, n).toBe(r.method !== 'POST');
    }
  });

  it('matchRoute finds each route by the path routePath builds, with its id, for any id', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (id) => {
        fc.pre(!['refresh', 'seed', 'plan'].includes(id));
        for (const name of ROUTE_NAMES) {
          const route = OPERATOR_ROUTES[name];
          const m = matchRoute(route.method, segments(routePath(name, id)));
          expect(m.name).toBe(name);
          if (m.name !== undefined && route.path.includes(':id')) expect(m.params.id).toBe(id);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('a literal segment wins over an id; a wrong method lists the allowed ones; an unknown path none', () => {
    expect(matchRoute('POST', ['v1', 'nodes', 'refresh'])).toMatchObject({ name: 'refreshNodes' });
    expect(matchRoute('GET', ['v1', 'nodes', 'refresh'])).toEqual({ name: undefined, methods: ['POST'] });
    expect(matchRoute('PUT', ['v1', 'nodes', 'n1'])).toEqual({ name: undefined, methods: ['GET', 'DELETE'] });
    expect(matchRoute('GET', ['v1', 'nope'])).toEqual({ name: undefined, methods: [] });
    expect(matchRoute('GET', ['v1', 'nodes', ''])).toEqual({ name: undefined, methods: [] });
    expect(matchRoute('POST', ['v1', 'jobs', 'plan'])).toMatchObject({ name: 'planJob' });
    expect(matchRoute('GET', ['v1', 'jobs', 'web'])).toMatchObject({ name: 'getJob', params: { id: 'web' } });
  });
});

describe('the roles of the routes', () => {
  it('every route names a role; every GET is viewer; nothing that changes state is viewer', () => {
    for (const n of ROUTE_NAMES) {
      const r = OPERATOR_ROUTES[n];
      expect(['viewer', 'operator', 'admin'], n).toContain(r.role);
      if (r.method === 'GET' && n !== 'listOperators') expect(r.role, n).toBe('viewer');
      if (r.method !== 'GET') expect(r.role, n).not.toBe('viewer');
    }
  });

  it('nodes, trust, revocations and operators are admin; placing and operating instances is operator', () => {
    const roles = Object.fromEntries(ROUTE_NAMES.map((n) => [n, OPERATOR_ROUTES[n].role]));
    for (const n of [
      'addNode',
      'addSeed',
      'removeNode',
      'pinNode',
      'pushRevocations',
      'listOperators',
      'addOperator',
      'removeOperator',
    ])
      expect(roles[n], n).toBe('admin');
    for (const n of ['place', 'start', 'stop', 'unload', 'ackAlert', 'settle', 'refreshNodes'])
      expect(roles[n], n).toBe('operator');
    for (const n of ['planJob', 'runJob', 'revertJob', 'stopJob']) expect(roles[n], n).toBe('operator');
    for (const n of ['listJobs', 'getJob', 'jobHistory']) expect(roles[n], n).toBe('viewer');
  });
});
