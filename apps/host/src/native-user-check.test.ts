import { describe, expect, it } from 'vitest';
import { nativeRouteWithheld, nativeUserMismatch } from './native-user-check.js';

describe('nativeUserMismatch (the unit user and run_as_user agree)', () => {
  it('flags run_as_user on a host that is not root, with the native route', () => {
    const why = nativeUserMismatch({ routes: ['native', 'wasi'], runAsUser: 'heddle-work', uid: 998 });
    expect(why).toContain('"heddle-work" but the host runs as uid 998, not root');
  });

  it('accepts root with run_as_user, a non-root host without it, and hosts without the native route', () => {
    expect(nativeUserMismatch({ routes: ['native'], runAsUser: 'heddle-work', uid: 0 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['wasi'], runAsUser: undefined, uid: 998 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['wasi'], runAsUser: 'heddle-work', uid: 998 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['native'], runAsUser: 'x', uid: undefined })).toBeUndefined();
  });
});

describe('nativeRouteWithheld (a configured native route the host cannot offer)', () => {
  it('says so for a non-root host with neither run_as_user nor allow_host_user', () => {
    const why = nativeRouteWithheld({ routes: ['native', 'wasi'], runAsUser: undefined, uid: 1000 });
    expect(why).toContain('not offered');
    expect(why).toContain('runtime.native: no_such_id');
  });

  it('is quiet when the route is offered or not configured', () => {
    const base = { routes: ['native'], runAsUser: undefined, uid: 1000 };
    expect(nativeRouteWithheld({ ...base, allowHostUser: true })).toBeUndefined();
    expect(nativeRouteWithheld({ ...base, runAsUser: 'heddle-work' })).toBeUndefined();
    expect(nativeRouteWithheld({ ...base, uid: 0 })).toBeUndefined();
    expect(nativeRouteWithheld({ ...base, routes: ['wasi'] })).toBeUndefined();
    expect(nativeRouteWithheld({ ...base, uid: undefined })).toBeUndefined();
  });
});
