import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link HostServiceError}: `invalid_config` (an option the service was built with is
 * wrong: a bad route name, a data directory that cannot be used), `shutting_down` (the service is
 * draining and takes no new work).
 */
export type HostServiceErrorCode = 'invalid_config' | 'shutting_down';

/** An error of the host service itself (never sent on the wire: requests get refusals). */
export class HostServiceError extends HeddleError {
  declare readonly code: HostServiceErrorCode;

  constructor(code: HostServiceErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, message, options);
  }
}

/** The message of a thrown value: an Error's message, or the value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The `code` of a failed system call (`ENOENT`, ...), or undefined for anything else. */
export function errnoOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}
