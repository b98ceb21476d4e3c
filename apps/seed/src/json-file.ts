import { errnoCode, errorMessage } from '@heddle/cli-kit';
import { readTextBounded } from '@heddle/envelope';
import type { z } from 'zod';
import { badInput } from './cli-error.js';

/** The largest profile file read (seed.json, pins.json, installed.json). */
export const MAX_PROFILE_FILE_BYTES = 1024 * 1024;

/**
 * Reads and validates a JSON file of the profile. `undefined` when it does not exist and `optional`;
 * otherwise refused (exit 3) with `code`, naming the file and the field at fault.
 */
export function readJsonFile<T>(
  path: string,
  schema: z.ZodType<T>,
  code: string,
  optional: boolean,
): T | undefined {
  let text: string;
  try {
    text = readTextBounded(path, 1024 * 1024);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' && optional) return undefined;
    throw badInput(code, `${path}: cannot read: ${errorMessage(err)}`, undefined, err);
  }
  if (text.length > MAX_PROFILE_FILE_BYTES) throw badInput(code, `${path}: larger than 1 MiB`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badInput(code, `${path}: not JSON: ${errorMessage(err)}`, undefined, err);
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue?.path.map(String).join('.') ?? '';
    throw badInput(
      code,
      `${path}: ${field === '' ? '' : `${field}: `}${issue?.message ?? 'invalid'}`,
      field || undefined,
    );
  }
  return r.data;
}
