/** What {@link nativeUserMismatch} looks at: the routes, `native.run_as_user` and the host's own uid. */
export interface NativeUserSetup {
  readonly routes: readonly string[];
  readonly runAsUser: string | undefined;
  /** The host process's uid (`process.getuid()`); undefined where there is none (Windows). */
  readonly uid: number | undefined;
  /** `native.allow_host_user`: workloads may run as the host's own (non-root) user. */
  readonly allowHostUser?: boolean;
}

/**
 * Why the host's user and `native.run_as_user` disagree, or undefined when they agree: only a host
 * running as root can start a native workload as another user, so `run_as_user` on a host that is
 * not root makes every native start fail (docs/host.md, "systemd": the unit's `User=` and
 * `run_as_user` go together). The case of root without `run_as_user` is warned about on its own.
 */
export function nativeUserMismatch(s: NativeUserSetup): string | undefined {
  if (!s.routes.includes('native') || s.runAsUser === undefined || s.uid === undefined || s.uid === 0) {
    return undefined;
  }
  return `native.run_as_user is ${JSON.stringify(s.runAsUser)} but the host runs as uid ${s.uid}, not root: it cannot switch users, so every native workload will fail to start; run the host as root (the native systemd drop-in, docs/host.md) or drop the native route and run_as_user`;
}

/**
 * Why the native route is listed but not offered, or undefined when it is offered (or not listed): a
 * host that is not root, with neither `native.run_as_user` nor `native.allow_host_user`, leaves
 * `runtime.native` out of its describe, so the controller never chooses it for a native variant
 * and a place pinned to it fails with `runtime.native: no_such_id`. Said once at start-up, because
 * nothing else on the host would say it.
 */
export function nativeRouteWithheld(s: NativeUserSetup): string | undefined {
  if (!s.routes.includes('native') || s.runAsUser !== undefined || s.allowHostUser === true) return undefined;
  if (s.uid === undefined || s.uid === 0) return undefined;
  return `the native route is configured but not offered: the host runs as uid ${s.uid} (not root) with neither native.run_as_user nor native.allow_host_user, so its describe has no runtime.native capability and native places fail with "runtime.native: no_such_id"; run the host as root with native.run_as_user (docs/host.md), or set native.allow_host_user for development, or drop the native route`;
}
