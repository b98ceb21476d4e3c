import { createHash } from 'node:crypto';
import type { CogConfig, StoreCog } from '../seed-api.js';

/** Options of {@link SeedSimulator.start}. */
export interface SeedSimulatorOptions {
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP when absent. */
  readonly https?: { readonly cert: string; readonly key: string };
  /** Listen address (default `127.0.0.1`). */
  readonly host?: string;
  /** Listen port (default 0: any free port). */
  readonly port?: number;
  /** The store catalog (default {@link DEFAULT_CATALOG}). */
  readonly catalog?: readonly StoreCog[];
  /** At most this many cogs run at once (default 3). */
  readonly concurrencyCap?: number;
  /** How long an install takes, in ms (default 200). */
  readonly installDelayMs?: number;
  /** Whether a pairing window is open at start (default false). */
  readonly pairWindowOpen?: boolean;
  /** Tokens already paired. */
  readonly tokens?: readonly string[];
  /** How often a running cog appends a log line, in ms (default 200). */
  readonly tickMs?: number;
  /** How long a pairing window lasts, in seconds (default 60). */
  readonly pairWindowSecs?: number;
}

/** One request the simulator saw. Never holds the token, only whether one was sent. */
export interface SimRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  /** Whether an `Authorization: Bearer ...` header was present (valid or not). */
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
  readonly config: CogConfig;
}

/** How {@link SeedSimulator.installWithoutAnswer} drops the answer: destroy the socket, or never answer. */
export type NoAnswerMode = 'destroy' | 'hang';

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

/** The documented Seed API prefix. */
export const API_PREFIX = '/api/v1';

/** Request bodies larger than this are refused (413). */
export const MAX_BODY_BYTES: number = 64 * 1024;

/** A well-formed cog id. */
export const COG_ID_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;
