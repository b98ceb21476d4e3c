import type { IncomingMessage } from 'node:http';
import { HeddleError, type JsonValue, parseJson } from '@heddle/envelope';
import type { z } from 'zod';
import { MAX_BODY_BYTES } from './constants.js';
import { ApiFailure } from './errors.js';

/**
 * Reads a request body of at most `maxBytes` (`too_large` beyond, refused as soon as the declared
 * length or the bytes read exceed it).
 */
export function readBody(req: IncomingMessage, maxBytes: number = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
    req.on('close', () => {
      if (done) return;
      done = true;
      reject(
        new ApiFailure('bad_json', 'the client closed the connection before the body ended', { field: '$' }),
      );
    });
  });
}

function tooLarge(maxBytes: number): ApiFailure {
  return new ApiFailure('too_large', `the request body exceeds ${maxBytes} bytes`, { field: '$' });
}

/**
 * Parses a body as a strict JSON object (no duplicate keys, bounded depth; an empty body is `{}`).
 * Refuses with `bad_json` naming where.
 */
export function parseBody(bytes: Buffer): JsonValue {
  if (bytes.length === 0) return {};
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiFailure('bad_json', 'the request body is not UTF-8', { field: '$' });
  }
  try {
    return parseJson(text, { maxBytes: MAX_BODY_BYTES, integersOnly: false });
  } catch (err) {
    const field = (err instanceof HeddleError ? err.field : undefined) ?? '$';
    const why = err instanceof Error ? err.message : String(err);
    throw new ApiFailure('bad_json', `the request body is not valid JSON: ${why}`, {
      field,
      cause: err,
    });
  }
}

/** A zod issue path as the operator reads it: `prefer[0]`. */
function fieldOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out === '' ? '$' : out;
}

/** Validates `value` with `schema`; refuses with `invalid_input` naming the first bad field. */
export function validate<T, I = unknown>(schema: z.ZodType<T, I>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = [...(issue?.path ?? []), ...(unknown === undefined ? [] : [unknown])];
  const field = fieldOf(path);
  const message =
    unknown === undefined ? (issue?.message ?? 'invalid') : `unknown field ${JSON.stringify(unknown)}`;
  throw new ApiFailure('invalid_input', `${what} ${field}: ${message}`, { field });
}
