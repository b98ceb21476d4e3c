/**
 * The Cognitum Seed's HTTP API as this package uses it (docs/seed.md). Every response is
 * parsed with zod at the boundary (see `api-schemas.ts`); these are the parsed shapes.
 */

/** `GET /api/v1/status` (documented fields, each optional; anything else kept as is, bounded). */
export interface SeedStatus {
  /** The Seed's device id (a UUID). */
  readonly device_id?: string | undefined;
  /** Seconds since boot. */
  readonly uptime_secs?: number | undefined;
  /** The current epoch. */
  readonly epoch?: number | undefined;
  /** Whether any client is paired. */
  readonly paired?: boolean | undefined;
  /** The Seed's roles (`custody`, `optimizer`, `delivery`, ...). */
  readonly roles?: readonly string[] | undefined;
  readonly [key: string]: unknown;
}

/** `GET /api/v1/identity`. */
export interface SeedIdentity {
  /** The Seed's own id (a UUID). */
  readonly device_id: string;
  /** Its Ed25519 public key (hex, encoding not confirmed). */
  readonly public_key?: string | undefined;
  readonly firmware_version?: string | undefined;
  readonly epoch?: number | undefined;
  readonly [key: string]: unknown;
}

/** `GET /api/v1/pair/status` (each field optional: a Seed that omits one leaves it unknown). */
export interface PairStatus {
  /** Whether any client is paired. */
  readonly paired?: boolean | undefined;
  /** Number of paired clients. */
  readonly client_count?: number | undefined;
  /** Whether a pairing window is open now. */
  readonly pairing_window_open?: boolean | undefined;
  /** Seconds left in the window (0 when closed). */
  readonly window_remaining_secs?: number | undefined;
}

/** What the adapter reads of `GET /api/v1/apps/{id}/manifest` (`cog.toml` as JSON). */
export interface CogManifest {
  /** `[console].allowed_commands`, when the manifest lists them. */
  readonly allowedCommands?: readonly string[];
}

/** One cog of the store catalog (`GET /api/v1/apps/available` -> `{cogs: [...]}`). */
export interface StoreCog {
  readonly id: string;
  readonly version: string;
  /** SHA-256 of the artifact (64 hex), when the store publishes it. */
  readonly sha256?: string;
  readonly size?: number;
}

/** One installed cog (`GET /api/v1/apps` -> `{installed: [...]}`). */
export interface InstalledCog {
  readonly id: string;
  readonly version: string;
  readonly running: boolean;
  readonly pid?: number | null;
}

/** `GET /api/v1/apps/{id}/logs?lines=N`. */
export interface CogLogs {
  readonly output: readonly string[];
  readonly errors: readonly string[];
}

/** What a console run answered (`POST /api/v1/apps/{id}/console {command}`). */
export interface ConsoleResult {
  readonly output: readonly string[];
  readonly errors: readonly string[];
  /** Exit code, when the Seed reports one. */
  readonly exit_code?: number | null;
}

/** A cog's configuration (`GET|PUT /api/v1/apps/{id}/config`): a flat JSON object. */
export type CogConfig = Readonly<Record<string, string | number | boolean | null>>;

/**
 * The Seed API client contract (implemented by `SeedClient`; tests may use the simulator behind it).
 * Every method rejects with a `SeedError` (see errors.ts): `not_paired` for 401/403, `seed_error`
 * for an `{error}` body, `timeout`, `tls_pin` for a certificate whose key is not the pinned one,
 * `bad_answer` for an unparseable or oversized answer, `unreachable`. The bearer token never appears
 * in any error message.
 */
export interface SeedApi {
  /** The Seed's base URL (`https://host:8443` or `http://169.254.42.1`). */
  readonly url: string;
  status(): Promise<SeedStatus>;
  identity(): Promise<SeedIdentity>;
  pairStatus(): Promise<PairStatus>;
  /** Opens a pairing window (the Seed may require a physical button instead: then `seed_error`). */
  openPairWindow(): Promise<void>;
  /** Pairs while a window is open; returns the bearer token (store it with `saveToken`, never log it). */
  pair(clientName: string): Promise<string>;
  available(): Promise<readonly StoreCog[]>;
  installed(): Promise<readonly InstalledCog[]>;
  /**
   * Installs (and, the Seed's way, auto-starts) the store cog `id`. Slow: its own timeout. Resolves
   * `already_installed` when the Seed says the cog was installed before (it then installed nothing).
   */
  install(id: string): Promise<'installed' | 'already_installed'>;
  start(id: string): Promise<void>;
  stop(id: string): Promise<void>;
  uninstall(id: string): Promise<void>;
  logs(id: string, lines: number): Promise<CogLogs>;
  console(id: string, command: string): Promise<ConsoleResult>;
  /** The cog's manifest (its `[console].allowed_commands`). */
  manifest(id: string): Promise<CogManifest>;
  getConfig(id: string): Promise<CogConfig>;
  /** Merges `config` into the cog's config (the Seed validates it against the manifest). */
  setConfig(id: string, config: CogConfig): Promise<void>;
  /**
   * Checks the token with a call the Seed authenticates and that changes nothing: `not_paired` when
   * the Seed refuses it (see `SeedClient.verifyToken`).
   */
  verifyToken(): Promise<void>;
}
