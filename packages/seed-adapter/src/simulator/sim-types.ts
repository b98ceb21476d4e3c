import { createHash } from 'node:crypto';
import type { StoreCog } from '../seed-api.js';

/**
 * Options of {@link SeedSimulator.start}. The simulator follows the Seed's public API documents (see docs/seed.md, "The simulator") (the
 * Seed's public API documents, with how sure each point is); what the documents leave open is a knob
 * here (the cap refusal's status, the pairing window length, 401 or 403, whether reads need a token).
 */
export interface SeedSimulatorOptions {
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP when absent. */
  readonly https?: { readonly cert: string; readonly key: string };
  /** Listen address (default `127.0.0.1`). */
  readonly host?: string;
  /** Listen port (default 0: any free port). */
  readonly port?: number;
  /** The store catalog (default {@link DEFAULT_CATALOG}). */
  readonly catalog?: readonly StoreCog[];
  /** Per-cog manifests (`cog.toml` as JSON); a cog without one gets {@link defaultManifest}. */
  readonly manifests?: Readonly<Record<string, SimManifest>>;
  /** At most this many cogs run at once (default 3, "max 3 concurrent active cogs"). */
  readonly concurrencyCap?: number;
  /** The HTTP status of a start or install refused by the cap (undocumented; default 409). */
  readonly capStatus?: number;
  /** How long an install takes, in ms (default 200). */
  readonly installDelayMs?: number;
  /** Whether a pairing window is open at start (default false). */
  readonly pairWindowOpen?: boolean;
  /** Tokens already paired (each as its own client, `preset-1`, `preset-2`, ...). */
  readonly tokens?: readonly string[];
  /** How often a running cog appends a log line, in ms (default 200). */
  readonly tickMs?: number;
  /** How long a pairing window lasts, in seconds (documents say 30 or 60; default 30). */
  readonly pairWindowSecs?: number;
  /** The status of a write without a valid token (documented 403 "not paired"; 401 is also seen). */
  readonly unauthorizedStatus?: 401 | 403;
  /**
   * Whether the reads off the WiFi allowlist (logs, config, manifest) need a token, as they do for a
   * client on WiFi (default false: the loopback/USB path, where reads are open).
   */
  readonly readsNeedToken?: boolean;
}

/** One request the simulator saw. Never holds the token, only whether one was sent. */
export interface SimRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  /** Whether a token was sent (`Authorization: Bearer` or `X-Pairing-Token`), valid or not. */
  readonly token: boolean;
  /** The HTTP status answered (absent while pending, or when no answer was sent). */
  status?: number;
}

/** A snapshot of one installed cog, from {@link SeedSimulator.installed}. */
export interface SimInstalledCog {
  readonly id: string;
  readonly version: string;
  readonly running: boolean;
  readonly pid: number | null;
  readonly config: Readonly<Record<string, unknown>>;
}

/**
 * How {@link SeedSimulator.installWithoutAnswer} drops the answer: destroy the socket once installed,
 * never answer, or destroy it at once while the install goes on and completes after its delay (`early`).
 */
export type NoAnswerMode = 'destroy' | 'hang' | 'early';

/** One `[config.<key>]` of a cog manifest. */
export interface SimConfigKnob {
  readonly type: 'integer' | 'float' | 'boolean' | 'string';
  readonly default?: string | number | boolean;
  readonly min?: number;
  readonly max?: number;
  readonly allowed?: readonly string[];
}

/** A cog manifest as `GET /apps/{id}/manifest` serves it: `cog.toml` as JSON (the parts the simulator uses). */
export interface SimManifest {
  readonly cog: {
    readonly id: string;
    readonly name: string;
    readonly version: string;
    readonly binary: string;
  };
  readonly config: Readonly<Record<string, SimConfigKnob>>;
  readonly console: {
    readonly allowed_commands: readonly string[];
    readonly max_runtime_secs: number;
    readonly output_limit_bytes: number;
  };
  readonly resources: { readonly ram_mb: number; readonly cpu_pct: number };
}

/** The console commands every default manifest allows (the COGS runtime contract). */
export const DEFAULT_CONSOLE_COMMANDS: readonly string[] = ['--once', '--once --interval 1', '--help'];

/** The manifest a cog gets when none is given: `--once`, `--interval` and `--help`, one `interval` knob. */
export function defaultManifest(id: string, version: string): SimManifest {
  return {
    cog: { id, name: id, version, binary: `cog-${id}-arm` },
    config: {
      interval: { type: 'integer', default: 5, min: 1, max: 3600 },
      sensor_source: { type: 'string', default: 'csi', allowed: ['csi', 'synthetic'] },
    },
    console: {
      allowed_commands: [...DEFAULT_CONSOLE_COMMANDS],
      max_runtime_secs: 15,
      output_limit_bytes: 65_536,
    },
    resources: { ram_mb: 32, cpu_pct: 10 },
  };
}

function fakeSha(id: string, version: string): string {
  return createHash('sha256').update(`cog:${id}@${version}`).digest('hex');
}

/** Builds a store cog with a deterministic fake sha256 and size. */
export function storeCog(id: string, version: string, size = 65_536): StoreCog {
  return { id, version, sha256: fakeSha(id, version), size };
}

/** The simulator's default store catalog. */
export const DEFAULT_CATALOG: readonly StoreCog[] = [
  storeCog('air-quality', '1.2.0', 184_320),
  storeCog('vibration', '0.4.1', 96_256),
  storeCog('presence', '2.0.0', 131_072),
  storeCog('thermal', '1.0.3', 71_680),
];

/** The registry version `GET /apps/available` reports. */
export const SIM_REGISTRY_VERSION = '2.3.2';

/** The firmware version the simulator reports in its identity. */
export const SIM_FIRMWARE = '0.24.2-sim';

/** The documented Seed API prefix. */
export const API_PREFIX = '/api/v1';

/** Request bodies larger than this are refused (413): the Seed's 64 KB body limit. */
export const MAX_BODY_BYTES: number = 64 * 1024;

/** A cog keeps at most this many log lines per stream. */
export const MAX_LOG_LINES = 1000;

/** A well-formed cog id. */
export const COG_ID_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The warning a cog logs when the sensor feed (UDP 5006) is taken and it falls back to synthetic data. */
export const SYNTHETIC_WARNING =
  'WARN cog-sensor-sources: cannot bind 0.0.0.0:5006 (address in use); falling back to synthetic seed-stream data';
