import { useState } from 'preact/hooks';
import { ApiCallError, call } from '../api.js';
import { html } from '../html.js';

/**
 * The login form: the operator pastes the API token (`<home>/api.token`); it is sent once in the body
 * of `POST /v1/session` and exchanged for an HttpOnly session cookie. It is never stored by the page.
 */
export function Login(props: { onLogin: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    // cast: the submit event of this form; its `token` input is read and cleared.
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      await call('POST', '/v1/session', { token: input.value.trim() });
      input.value = '';
      props.onLogin();
    } catch (err) {
      setError(
        err instanceof ApiCallError && err.status === 401
          ? 'That token was refused.'
          : String(err instanceof Error ? err.message : err),
      );
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="login">
    <h1>Heddle</h1>
    <form onSubmit=${submit} aria-describedby="login-help">
      <label for="token">Operator API token</label>
      <input id="token" name="token" type="password" autocomplete="off" required autofocus spellcheck="false" />
      <p id="login-help" class="help">The contents of <code>api.token</code> in the controller home. It is exchanged for a session cookie and never kept by this page.</p>
      ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
      <button type="submit" disabled=${busy}>Log in</button>
    </form>
  </main>`;
}
