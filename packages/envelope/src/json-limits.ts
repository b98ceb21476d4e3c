/** Bounds applied when JSON is produced or parsed, so that hostile input cannot exhaust a daemon. */
export interface JsonLimits {
  /** Maximum nesting depth of arrays and objects (the top level counts as depth 1). */
  readonly maxDepth: number;
  /** Maximum size of the JSON text in UTF-8 bytes. */
  readonly maxBytes: number;
}

/** Default bounds: depth 32, 1 MiB. */
export const DEFAULT_JSON_LIMITS: JsonLimits = Object.freeze({ maxDepth: 32, maxBytes: 1024 * 1024 });

/** A JSON value restricted to what Heddle signs: no floats, no undefined, no non-plain objects. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
