import type { JsonValue } from '@heddle/envelope';
import { z } from 'zod';
import { PackageError } from './errors.js';

/** One field of a cog's config schema: a type, bounds and an optional default. */
export type CogConfigField =
  | { type: 'string'; description?: string; required?: boolean; default?: string; max_length?: number }
  | {
      type: 'integer';
      description?: string;
      required?: boolean;
      default?: number;
      min?: number;
      max?: number;
    }
  | { type: 'boolean'; description?: string; required?: boolean; default?: boolean }
  | { type: 'enum'; description?: string; required?: boolean; default?: string; values: string[] };

/** A cog's config schema: field name (`[a-z][a-z0-9_]{0,63}`) to field. At most 64 fields. */
export type CogConfigSchema = Record<string, CogConfigField>;

const description = z.string().max(200).exactOptional();
const required = z.boolean().exactOptional();

const stringField = z
  .strictObject({
    type: z.literal('string'),
    description,
    required,
    default: z.string().max(4096).exactOptional(),
    max_length: z.int().min(1).max(65536).exactOptional(),
  })
  .refine((f) => f.default === undefined || f.max_length === undefined || f.default.length <= f.max_length, {
    message: 'default is longer than max_length',
    path: ['default'],
  });

const integerField = z
  .strictObject({
    type: z.literal('integer'),
    description,
    required,
    default: z.int().exactOptional(),
    min: z.int().exactOptional(),
    max: z.int().exactOptional(),
  })
  .refine((f) => f.min === undefined || f.max === undefined || f.min <= f.max, {
    message: 'min is greater than max',
    path: ['min'],
  })
  .refine(
    (f) =>
      f.default === undefined ||
      ((f.min === undefined || f.default >= f.min) && (f.max === undefined || f.default <= f.max)),
    { message: 'default is outside [min, max]', path: ['default'] },
  );

const booleanField = z.strictObject({
  type: z.literal('boolean'),
  description,
  required,
  default: z.boolean().exactOptional(),
});

const enumField = z
  .strictObject({
    type: z.literal('enum'),
    description,
    required,
    default: z.string().exactOptional(),
    values: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(64)
      .refine((v) => new Set(v).size === v.length, { message: 'values must be unique' }),
  })
  .refine((f) => f.default === undefined || f.values.includes(f.default), {
    message: 'default is not one of values',
    path: ['default'],
  });

/** Schema of one config field. */
export const CogConfigFieldSchema: z.ZodType<CogConfigField> = z.discriminatedUnion('type', [
  stringField,
  integerField,
  booleanField,
  enumField,
]);

/** Schema of a config schema. */
export const CogConfigSchemaSchema: z.ZodType<CogConfigSchema> = z
  .record(
    z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'config field names match [a-z][a-z0-9_]{0,63}'),
    CogConfigFieldSchema,
  )
  .refine((r) => Object.keys(r).length <= 64, { message: 'at most 64 config fields' });

/**
 * Checks a config object against a cog's config schema and returns it with defaults filled in. Refuses
 * (code `config_invalid`, naming the field) unknown fields, missing required fields, wrong types and
 * values outside the bounds.
 */
export function validateCogConfig(schema: CogConfigSchema, config: unknown): Record<string, JsonValue> {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new PackageError('config_invalid', 'config: expected an object', { field: 'config' });
  }
  // cast: a non-array object (checked just above): each field is checked against the schema below
  const input = config as Record<string, unknown>;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(schema, key)) {
      throw new PackageError('config_invalid', `config.${key}: not in the cog's config schema`, {
        field: `config.${key}`,
      });
    }
  }
  for (const [key, field] of Object.entries(schema)) {
    const f = `config.${key}`;
    const bad = (why: string): never => {
      throw new PackageError('config_invalid', `${f}: ${why}`, { field: f });
    };
    const value = Object.hasOwn(input, key) ? input[key] : field.default;
    if (value === undefined) {
      if (field.required) bad('is required');
      continue;
    }
    switch (field.type) {
      case 'string':
        if (typeof value !== 'string') bad('expected a string');
        else if (field.max_length !== undefined && value.length > field.max_length)
          bad(`longer than ${field.max_length}`);
        break;
      case 'integer':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) bad('expected an integer');
        else if (field.min !== undefined && value < field.min) bad(`below the minimum ${field.min}`);
        else if (field.max !== undefined && value > field.max) bad(`above the maximum ${field.max}`);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') bad('expected true or false');
        break;
      case 'enum':
        if (typeof value !== 'string' || !field.values.includes(value))
          bad(`expected one of ${field.values.join(', ')}`);
        break;
    }
    // cast: value passed its field's type check above (a string, integer, number or boolean)
    out[key] = value as JsonValue;
  }
  return out;
}
