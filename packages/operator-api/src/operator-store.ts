import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { firstZodIssue, parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { ApiFailure } from './errors.js';
import {
  OPERATORS_SCHEMA,
  type OperatorEntry,
  type OperatorsFile,
  OperatorsFileSchema,
} from './operators-file.js';

/** Largest accepted operators file: 4 MiB. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** The SHA-256 of a bearer token, hex: what the operators file keeps of a token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Reads and validates an operators file; a missing file is an empty one. Throws `ApiFailure`
 * `operators_invalid` naming the field (`operators[2].role`) of the first problem.
 */
export function readOperatorsFile(path: string): OperatorsFile {
  let text: string;
  try {
    text = readTextBounded(path, MAX_FILE_BYTES);
  } catch (err) {
    if (err instanceof Error && Reflect.get(err, 'code') === 'ENOENT')
      return { schema: OPERATORS_SCHEMA, operators: [] };
    throw new ApiFailure(
      'operators_invalid',
      `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
      {
        field: '$',
        cause: err,
      },
    );
  }
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: MAX_FILE_BYTES });
  } catch (err) {
    throw new ApiFailure(
      'operators_invalid',
      `${path}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      {
        field: '$',
        cause: err,
      },
    );
  }
  const r = OperatorsFileSchema.safeParse(value);
  if (!r.success) {
    const issue = firstZodIssue(r.error);
    const field = issue.field.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    throw new ApiFailure('operators_invalid', `${path}: ${field}: ${issue.message}`, { field });
  }
  return r.data;
}

/**
 * The operators of a controller, kept in `<home>/operators.json` (mode 0600, written crash-safely).
 * Lookups re-read the file when it changed on disk (an edit by hand takes effect on the next request;
 * an invalid edit fails closed: no operator is known until it is fixed, and {@link OperatorStore.problem}
 * says why; the home's `api.token` still works).
 */
export class OperatorStore {
  readonly #path: string;
  #file: OperatorsFile;
  #stamp: string;
  #problem: string | undefined;

  private constructor(path: string, file: OperatorsFile) {
    this.#path = path;
    this.#file = file;
    this.#stamp = stampOf(path);
  }

  /** Opens the file at `path` (missing: no operators). Throws `operators_invalid` for a bad file. */
  static open(path: string): OperatorStore {
    return new OperatorStore(path, readOperatorsFile(path));
  }

  /** The file's path. */
  get path(): string {
    return this.#path;
  }

  /** Why the last change on disk was ignored, if it was. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** Every operator, in the file's order. */
  list(): readonly OperatorEntry[] {
    this.#refresh();
    return this.#file.operators;
  }

  /** The operator with the Ed25519 public key `hex`. */
  byKey(hex: string): OperatorEntry | undefined {
    return this.list().find((o) => 'public_key' in o && o.public_key === hex);
  }

  /** The operator whose token hashes to `sha256Hex`. */
  byTokenHash(sha256Hex: string): OperatorEntry | undefined {
    return this.list().find((o) => 'token_sha256' in o && o.token_sha256 === sha256Hex);
  }

  /** Adds an operator (`operator_exists`, 409, when the name or credential is taken) and saves the file. */
  add(entry: OperatorEntry): OperatorEntry {
    const all = this.list();
    const clash = all.find(
      (o) =>
        o.name === entry.name ||
        ('public_key' in o && 'public_key' in entry && o.public_key === entry.public_key) ||
        ('token_sha256' in o && 'token_sha256' in entry && o.token_sha256 === entry.token_sha256),
    );
    if (clash !== undefined) {
      const field = clash.name === entry.name ? 'name' : 'public_key';
      throw new ApiFailure(
        'operator_exists',
        `operator ${clash.name} already has that ${field === 'name' ? 'name' : 'key'}`,
        {
          field,
        },
      );
    }
    this.#save({ schema: OPERATORS_SCHEMA, operators: [...all, entry] });
    return entry;
  }

  /** Removes the operator `name` (`unknown_operator`, 404, otherwise) and saves the file; returns it. */
  remove(name: string): OperatorEntry {
    const all = this.list();
    const found = all.find((o) => o.name === name);
    if (found === undefined) {
      throw new ApiFailure('unknown_operator', `no operator ${name} (see heddle operator ls)`, {
        field: 'name',
      });
    }
    this.#save({ schema: OPERATORS_SCHEMA, operators: all.filter((o) => o !== found) });
    return found;
  }

  #save(file: OperatorsFile): void {
    writeFileAtomic(this.#path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    this.#file = file;
    this.#stamp = stampOf(this.#path);
    this.#problem = undefined;
  }

  #refresh(): void {
    const stamp = stampOf(this.#path);
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    try {
      this.#file = readOperatorsFile(this.#path);
      this.#problem = undefined;
    } catch (err) {
      // Fail closed: a broken file grants nothing (the home's api.token still works to repair it).
      this.#file = { schema: OPERATORS_SCHEMA, operators: [] };
      this.#problem = err instanceof Error ? err.message : String(err);
    }
  }
}

function stampOf(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return 'none';
  }
}
