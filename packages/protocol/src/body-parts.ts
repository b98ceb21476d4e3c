/**
 * The building blocks of the method bodies and answers (docs/protocol.md section 14): ids, hashes,
 * config values and the bounds both sides agree on (run modes are `@heddle/model`'s `RunModeSchema`).
 */
import type { JsonValue } from '@heddle/envelope';
import { COG_ID_RE } from '@heddle/package';
import { z } from 'zod';

/** Longest stop grace a request may ask for: 120 s (a call's answer must still fit its lifetime). */
export const MAX_GRACE_MS = 120_000;
/** Stop grace when a request names none: 5 s. */
export const DEFAULT_GRACE_MS = 5_000;
/** Most log lines one `logs` call returns. */
export const MAX_LOG_LINES = 10_000;
/** Log lines when a request names none. */
export const DEFAULT_LOG_LINES = 100;
/** Most config values a place may carry. */
export const MAX_CONFIG_VALUES = 64;
/** Longest string config value (UTF-16 code units). */
export const MAX_CONFIG_STRING = 4096;

/** A cog id: `[a-z0-9][a-z0-9._-]{0,63}`. */
export const CogIdSchema: z.ZodString = z
  .string()
  .regex(COG_ID_RE, 'expected a cog id ([a-z0-9][a-z0-9._-]{0,63})');

/** 64 lower-case hex characters (a manifest hash, a package id, a decision id). */
export const Hash64Schema: z.ZodString = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');

/** A node id: 32 lower-case hex characters. */
export const NodeIdSchema: z.ZodString = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'expected a node id (32 lower-case hex characters)');

/** An instance id: `<cog id>-<16 hex>`. */
export const InstanceIdSchema: z.ZodString = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}-[0-9a-f]{16}$/, 'expected an instance id (<cog id>-<16 hex>)');

/** A variant name, `<arch>-<route>` (`x86_64-native`). */
export const VariantSchema: z.ZodString = z
  .string()
  .regex(/^[a-z0-9_]{1,16}-[a-z]{1,16}$/, 'expected <arch>-<route>, such as x86_64-native');

/** A config field name: `[a-z][a-z0-9_]{0,63}`. */
export const ConfigFieldSchema: z.ZodString = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected a config field name');

/** A Unix time in ms, or any other count: a non-negative integer. */
export const CountSchema: z.ZodInt = z.int().nonnegative();

/** One config value: a string (at most 4096 characters), a number, a boolean or null. */
export type ConfigValue = string | number | boolean | null;

/** Schema of a {@link ConfigValue}. */
export const ConfigValueSchema: z.ZodType<ConfigValue> = z.union([
  z.string().max(MAX_CONFIG_STRING),
  z.number(),
  z.boolean(),
  z.null(),
]);

/** Config values by field name, at most {@link MAX_CONFIG_VALUES} of them. */
export const ConfigValuesSchema: z.ZodType<Record<string, ConfigValue>> = z
  .record(ConfigFieldSchema, ConfigValueSchema)
  .refine((v) => Object.keys(v).length <= MAX_CONFIG_VALUES, `at most ${MAX_CONFIG_VALUES} values`);

/** A JSON object of the answers (what `okOutcome` carries). */
export type AnswerObject = { [key: string]: JsonValue };
