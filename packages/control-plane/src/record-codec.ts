import type { z } from 'zod';
import { StateError } from './errors.js';
import type { TableSpec } from './sqlite-tables.js';

// How a record becomes a row and back, for every store (SQLite and PostgreSQL keep the same
// columns): the record is validated with its table's zod schema on the way in and on the way out;
// list and object fields are JSON text, booleans are whatever the engine stores them as.

function issuePath(error: z.ZodError): string {
  return error.issues[0]?.path.map(String).join('.') ?? '';
}

function issue(error: z.ZodError): string {
  const first = error.issues[0];
  return first === undefined ? 'invalid' : `${first.path.map(String).join('.') || '(row)'}: ${first.message}`;
}

/**
 * Validates `record` against its table's schema and turns it into column values, in column order
 * (JSON fields as text, booleans through `bool`). An invalid record is `StateError` `corrupt`,
 * naming the table, key and field.
 */
export function encodeRecord<R>(spec: TableSpec<R>, record: R, bool: (b: boolean) => unknown): unknown[] {
  const { name, key, columns, json, bools, schema } = spec;
  // cast: the record is validated by the table schema below; only its key is read here
  const keyValue = (record as Record<string, unknown> | null)?.[key];
  const parsed = schema.safeParse(record);
  if (!parsed.success) {
    throw new StateError(
      'corrupt',
      `refusing to write an invalid ${name} row (${key} ${String(keyValue)}): ${issue(parsed.error)}`,
      { field: `${name}.${issuePath(parsed.error)}` },
    );
  }
  // cast: a parsed row of a z.object schema is a plain object
  const rec = parsed.data as Record<string, unknown>;
  return columns.map((c) => {
    const v = rec[c];
    if (json.has(c)) return v === null || v === undefined ? null : JSON.stringify(v);
    if (bools.has(c)) return bool(v === true);
    return v;
  });
}

/**
 * Turns a row (column name to value) back into a record: JSON text is parsed, booleans stored as
 * 0/1 become booleans, and the result is validated; a row that does not parse is `StateError`
 * `corrupt`, naming the table, key and column.
 */
export function decodeRow<R>(spec: TableSpec<R>, row: unknown): R {
  const { name, key, json, bools, schema } = spec;
  // cast: both drivers answer rows as plain objects
  const raw = { ...(row as Record<string, unknown>) };
  const keyValue = String(raw[key]);
  for (const c of json) {
    const v = raw[c];
    if (typeof v !== 'string') continue;
    try {
      raw[c] = JSON.parse(v);
    } catch (cause) {
      throw new StateError('corrupt', `corrupt row in ${name} (${key} ${keyValue}): ${c} is not valid JSON`, {
        field: `${name}.${c}`,
        cause,
      });
    }
  }
  for (const c of bools) {
    if (raw[c] === 0 || raw[c] === 1) raw[c] = raw[c] === 1;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new StateError('corrupt', `corrupt row in ${name} (${key} ${keyValue}): ${issue(parsed.error)}`, {
      field: `${name}.${issuePath(parsed.error)}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
