// The dashboard's calls to the operator API (docs/operator-api.md): same origin, the session cookie
// (never the token), and the X-Heddle-Request header every change needs.

/** A failure the API answered (its error code and message), or `network` when none came. */
export class ApiCallError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** Told when a call answers 401 (the session ended): the app shows the login form again. */
let onUnauthorized: () => void = () => undefined;

/** Sets what happens when the session is gone. */
export function whenUnauthorized(fn: () => void): void {
  onUnauthorized = fn;
}

/** Calls `method path` with an optional JSON body; resolves with the answer's JSON. */
export async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        'x-heddle-request': '1',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiCallError('network', `the controller did not answer (${String(err)})`, 0);
  }
  const text = await res.text();
  let value: unknown = null;
  try {
    value = text === '' ? null : JSON.parse(text);
  } catch {
    throw new ApiCallError('bad_answer', `${method} ${path}: not JSON (status ${res.status})`, res.status);
  }
  if (!res.ok) {
    // cast: an error answer is `{"error": {code, message}}` (docs/operator-api.md); both are read optionally.
    const e = (value as { error?: { code?: string; message?: string } } | null)?.error;
    if (res.status === 401 && path !== '/v1/session') onUnauthorized();
    throw new ApiCallError(
      e?.code ?? 'http',
      e?.message ?? `${method} ${path}: status ${res.status}`,
      res.status,
    );
  }
  // cast: the answer of this route, as docs/operator-api.md gives it (the server validated what it sent).
  return value as T;
}

/** `GET path`. */
export const get = <T>(path: string): Promise<T> => call<T>('GET', path);
/** `POST path` with a JSON body (`{}` by default). */
export const post = <T>(path: string, body: unknown = {}): Promise<T> => call<T>('POST', path, body);
