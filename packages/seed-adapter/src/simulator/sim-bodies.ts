import { z } from 'zod';
import type { CogConfig } from '../seed-api.js';
import { SimRefusal } from './sim-state.js';
import { COG_ID_RE } from './sim-types.js';

const cogId = z.string().regex(COG_ID_RE);

const installBody = z.strictObject({ id: cogId });
const pairBody = z.strictObject({ client_name: z.string().min(1).max(64) });
const consoleBody = z.strictObject({ command: z.string().min(1).max(1024) });
const emptyBody = z.strictObject({}).optional();
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const configBody = z
  .record(
    z
      .string()
      .min(1)
      .max(128)
      .refine((k) => !RESERVED_KEYS.has(k), 'reserved key'),
    z.union([z.string().max(4096), z.number().finite(), z.boolean(), z.null()]),
  )
  .refine((r) => Object.keys(r).length <= 256, { message: 'at most 256 keys' });

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? what : issue.path.join('.');
  throw new SimRefusal(400, `bad ${what} body: ${field}: ${issue?.message ?? 'invalid'}`);
}

/** `POST /apps/install {id}`. */
export function parseInstall(body: unknown): { id: string } {
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

/** An empty body, or `{}` (start, stop, pair window). */
export function parseEmpty(body: unknown): void {
  parse(emptyBody, body, 'request');
}

/** `PUT /apps/{id}/config`: a flat object of strings, numbers, booleans and nulls. */
export function parseConfig(body: unknown): CogConfig {
  return parse(configBody, body, 'config');
}

/** A cog id taken from the path; refused (400) unless well formed. */
export function parseCogId(raw: string): string {
  if (!COG_ID_RE.test(raw)) throw new SimRefusal(400, 'bad cog id in path');
  return raw;
}

/** `?lines=N` of the logs route: 1-10000, default 50. */
export function parseLines(raw: string | null): number {
  if (raw === null) return 50;
  if (!/^\d{1,5}$/.test(raw)) throw new SimRefusal(400, 'lines must be an integer 1-10000');
  const n = Number(raw);
  if (n < 1 || n > 10_000) throw new SimRefusal(400, 'lines must be an integer 1-10000');
  return n;
}
