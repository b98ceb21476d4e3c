/** The message of anything thrown: an `Error`'s message, or the value as a string. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The stack of an `Error` (its message when it has none), or the value as a string. */
export function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
