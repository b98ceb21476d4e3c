import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link HollowError}: `invalid_count` (a fleet size outside 1 to 20,000),
 * `fleet_secret_invalid` (the fleet's secret file is not 64 hex characters), `unknown_host` (a host
 * index outside the fleet), `enrol_failed` (the controller refused to add a host), `invalid_command`
 * (a control line that is not a known command).
 */
export type HollowErrorCode =
  | 'invalid_count'
  | 'fleet_secret_invalid'
  | 'unknown_host'
  | 'enrol_failed'
  | 'invalid_command';

/** An error of the hollow-host app, with a stable {@link HollowErrorCode} and the field at fault. */
export class HollowError extends HeddleError {
  declare readonly code: HollowErrorCode;

  constructor(code: HollowErrorCode, message: string, field?: string, cause?: unknown) {
    super(code, message, {
      ...(field === undefined ? {} : { field }),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
