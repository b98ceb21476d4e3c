import type { NetworkLevel } from './tier.js';

/** The routes a cog variant can take; the route selects the host's runtime adapter. */
export const COG_ROUTES: readonly ['native', 'wasi', 'container'] = ['native', 'wasi', 'container'] as const;

/** A route of {@link COG_ROUTES}. */
export type CogRoute = (typeof COG_ROUTES)[number];

/** The CPU architectures a cog variant may name. */
export const COG_ARCHES: readonly ['aarch64', 'x86_64', 'armv7', 'riscv64', 'wasm32'] = [
  'aarch64',
  'x86_64',
  'armv7',
  'riscv64',
  'wasm32',
] as const;

/** An architecture of {@link COG_ARCHES}. */
export type CogArch = (typeof COG_ARCHES)[number];

const ROUTE_SET: ReadonlySet<unknown> = new Set(COG_ROUTES);
const ARCH_SET: ReadonlySet<unknown> = new Set(COG_ARCHES);

/** True when `value` is one of {@link COG_ROUTES}. */
export function isCogRoute(value: unknown): value is CogRoute {
  return ROUTE_SET.has(value);
}

/** True when `value` is one of {@link COG_ARCHES}. */
export function isCogArch(value: unknown): value is CogArch {
  return ARCH_SET.has(value);
}

/** True when `route` may go with `arch`: the `wasi` route goes with `wasm32` and only with it. */
export function routeFitsArch(arch: CogArch, route: CogRoute): boolean {
  return (route === 'wasi') === (arch === 'wasm32');
}

/** A variant name split into its parts. */
export interface VariantName {
  /** The architecture before the dash. */
  readonly arch: CogArch;
  /** The route after the dash. */
  readonly route: CogRoute;
}

/**
 * Splits a variant name `<arch>-<route>` (`x86_64-native`, `wasm32-wasi`): undefined unless the name
 * is exactly one known architecture, a dash and one known route that go together
 * ({@link routeFitsArch}). Every arch is dash-free, so the split is at the last dash.
 */
export function parseVariantName(name: string): VariantName | undefined {
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const arch = name.slice(0, dash);
  const route = name.slice(dash + 1);
  if (!isCogArch(arch) || !isCogRoute(route) || !routeFitsArch(arch, route)) return undefined;
  return { arch, route };
}

/** The variant name of `arch` and `route` (`x86_64-native`). */
export function variantName(arch: CogArch, route: CogRoute): string {
  return `${arch}-${route}`;
}

/**
 * The network each route gives an instance, as its adapter reports it: native processes are not
 * network-isolated (`egress`), WASI guests have no sockets (`none`), containers get `--network none`
 * unless their host allows more, and a Cognitum Seed's firmware decides its cogs' network (`egress`,
 * the route `remote.api`).
 */
export const ROUTE_NETWORK: Readonly<Record<CogRoute | 'remote.api', NetworkLevel>> = Object.freeze({
  native: 'egress',
  wasi: 'none',
  container: 'none',
  'remote.api': 'egress',
});

const NETWORK_OF: ReadonlyMap<string, NetworkLevel> = new Map(Object.entries(ROUTE_NETWORK));

/** The network of `route`: its {@link ROUTE_NETWORK} entry, `egress` (the most exposed) when unknown. */
export function routeNetwork(route: string | undefined): NetworkLevel {
  return (route === undefined ? undefined : NETWORK_OF.get(route)) ?? 'egress';
}
