// The Heddle dashboard (docs/operator-guide.md, "Dashboard"): logs in with a session cookie, then shows
// the controller's state and follows its event stream.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, whenUnauthorized } from './api.js';
import { App } from './app.js';
import { html } from './html.js';
import { Login } from './views/login.js';

function Root() {
  const [state, setState] = useState<'checking' | 'in' | 'out'>('checking');
  useEffect(() => {
    whenUnauthorized(() => setState('out'));
    get('/v1/session').then(
      () => setState('in'),
      () => setState('out'),
    );
  }, []);
  if (state === 'checking') return html`<p class="empty">Loading…</p>`;
  if (state === 'out') return html`<${Login} onLogin=${() => setState('in')} />`;
  return html`<${App} onLogout=${() => setState('out')} />`;
}

const root = document.getElementById('root');
if (root !== null) render(html`<${Root} />`, root);
