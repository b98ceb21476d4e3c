import { z } from 'zod';
import { SimRefusal } from './sim-state.js';
import { COG_ID_RE, MAX_LOG_LINES } from './sim-types.js';

const cogId = z.string().regex(COG_ID_RE);

// `{"id": ..., "config"?: {...}}`; swarm-deploy also sends `name` and `source` (passed over).
const installBody = z.looseObject({ id: cogId, config: z.record(z.string(), z.unknown()).optional() });
const pairBody = z.looseObject({ client_name: z.string().min(1).max(64) });
const consoleBody = z.looseObject({ command: z.string().min(1).max(1024) });
const configBody = z
  .record(z.string().min(1).max(128), z.unknown())
  .refine((r) => Object.keys(r).length <= 256, { message: 'at most 256 keys' });

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? what : issue.path.join('.');
  throw new SimRefusal(400, `bad ${what} body: ${field}: ${issue?.message ?? 'invalid'}`);
}

/** `POST /apps/install {id, config?}`. */
export function parseInstall(body: unknown): { id: string; config?: Record<string, unknown> | undefined } {
  return parse(installBody, body, 'install');
}

/** `POST /pair {client_name}`. */
export function parsePair(body: unknown): { client_name: string } {
  return parse(pairBody, body, 'pair');
}

/** `POST /apps/{id}/console {command}`. */
export function parseConsole(body: unknown): { command: string } {
  return parse(consoleBody, body, 'console');
}

/** `PUT /apps/{id}/config`: an object of keyed config knobs (checked against the manifest later). */
export function parseConfig(body: unknown): Record<string, unknown> {
  return parse(configBody, body, 'config');
}

/** A cog id taken from the path; refused (400) unless well formed. */
export function parseCogId(raw: string): string {
  if (!COG_ID_RE.test(raw)) throw new SimRefusal(400, 'bad app id in path');
  return raw;
}

/** `?lines=N` of the logs route: a positive integer (default 100), capped at {@link MAX_LOG_LINES}. */
export function parseLines(raw: string | null): number {
  if (raw === null) return 100;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new SimRefusal(400, 'lines must be a positive integer');
  return Math.min(Number(raw), MAX_LOG_LINES);
}
