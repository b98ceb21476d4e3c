import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link RuntimeError}. The first four are also control-protocol refusal codes, so a
 * host can pass them on as they are: `admission` (this adapter cannot run the workload: wrong route,
 * arch, header, missing file, a store pin it does not take), `governance` (the gate denied or deferred),
 * `runtime` (the adapter or the process failed), `unknown_instance`. `invalid_config` is an argument or
 * config value outside the package's schema (sent on the wire as `invalid_request`).
 */
export type RuntimeErrorCode = 'admission' | 'governance' | 'runtime' | 'unknown_instance' | 'invalid_config';

/** The message of anything thrown (an `Error`'s message, anything else as a string). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An error of a runtime adapter or of the WorkloadHost, with a stable {@link RuntimeErrorCode}. */
export class RuntimeError extends HeddleError {
  declare readonly code: RuntimeErrorCode;

  constructor(code: RuntimeErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, message, options);
  }
}
