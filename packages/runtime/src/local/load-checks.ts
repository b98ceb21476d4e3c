import type { JsonValue } from '@heddle/envelope';
import { type CogBody, PackageError, validateCogConfig } from '@heddle/package';
import { RuntimeError } from '../errors.js';
import type { HostContract } from '../workload.js';
import { checkDataDirUnder } from './data-dir.js';

/**
 * The config values of a load validated against the cog's schema, defaults filled in; a value outside
 * the schema is `invalid_config` naming the field (`config` when the schema error names none).
 */
export function validatedConfig(
  schema: CogBody['config'],
  values: Readonly<Record<string, JsonValue>>,
): Record<string, JsonValue> {
  try {
    return validateCogConfig(schema, values);
  } catch (err) {
    if (err instanceof PackageError) {
      throw new RuntimeError('invalid_config', err.message, { field: err.field ?? 'config', cause: err });
    }
    throw err;
  }
}

/**
 * Refuses (`invalid_config`, field `host.dataDir`) a data directory that is not absolute, holds `:` or
 * `,`, is a symbolic link, or (with `dataRoot`) does not resolve strictly under `dataRoot`.
 */
export function checkDataDir(host: HostContract, dataRoot?: string): void {
  checkDataDirUnder(host.dataDir, dataRoot);
}

/**
 * Refuses a console command the package does not declare (`invalid_config`, field `command`): a
 * console run only ever sends the commands listed in the package.
 */
export function checkConsoleCommand(declared: readonly string[], command: string, workloadId: string): void {
  if (declared.includes(command)) return;
  throw new RuntimeError(
    'invalid_config',
    `command: ${JSON.stringify(command)} is not a console command of ${workloadId} (declared: ${declared.join(', ') || 'none'})`,
    { field: 'command' },
  );
}

/** A limit option of an adapter: a non-negative safe integer, else `invalid_config` naming it. */
export function limitOption(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RuntimeError('invalid_config', `${field}: must be a non-negative integer`, { field });
  }
  return value;
}
