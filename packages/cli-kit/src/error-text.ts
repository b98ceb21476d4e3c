/** The message of anything thrown: an `Error`'s message, else its string form. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The errno-style `code` of a thrown value (`ENOENT`, `EPIPE`), when it has a string one. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** The `path` a file-system error names, when it has a string one. */
export function errnoPath(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('path' in err)) return undefined;
  return typeof err.path === 'string' ? err.path : undefined;
}
