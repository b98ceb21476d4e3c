import { messageOf, RuntimeError } from '../errors.js';

/** An adapter call's result: its value, or its error as a RuntimeError. */
export type Settled<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: RuntimeError };

/** The adapter's RuntimeError as it is, anything else it threw as code `runtime`. */
export function asRuntimeError(err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err;
  return new RuntimeError('runtime', messageOf(err), { cause: err });
}

/** Runs an adapter call and settles it: never rejects. */
export async function settle<T>(call: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, error: asRuntimeError(err) };
  }
}

/**
 * The value of a transition whose outcome is chained: its own error first, then the first record
 * that could not be chained.
 */
export function done<T>(r: Settled<T>, errors: readonly RuntimeError[]): T {
  if (!r.ok) throw r.error;
  if (errors[0] !== undefined) throw errors[0];
  return r.value;
}
