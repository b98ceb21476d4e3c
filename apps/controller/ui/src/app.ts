import type { VNode } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiCallError, call, get } from './api.js';
import { clock } from './format.js';
import { html } from './html.js';
import { describe, follow, type LiveEvent, type LiveState } from './live.js';
import type { AlertRecord, Approval, JobStatusAnswer, NodeView, Placement } from './types.js';
import { Alerts } from './views/alerts.js';
import { Approvals } from './views/approvals.js';
import { Audit } from './views/audit.js';
import { Instance } from './views/instance.js';
import { Instances } from './views/instances.js';
import { Jobs } from './views/jobs.js';
import { Nodes } from './views/nodes.js';

/** What the dashboard shows, reloaded from the API when the event stream says it changed. */
interface Data {
  readonly nodes: readonly NodeView[];
  readonly instances: readonly Placement[];
  readonly alerts: readonly AlertRecord[];
  readonly approvals: readonly Approval[];
  readonly approvalsAvailable: boolean;
  readonly jobs: readonly JobStatusAnswer[];
}

type Kind = 'nodes' | 'instances' | 'alerts' | 'approvals' | 'jobs';

const TABS: readonly { readonly id: string; readonly label: string }[] = [
  { id: 'nodes', label: 'Nodes' },
  { id: 'instances', label: 'Instances' },
  { id: 'alerts', label: 'Alerts' },
  { id: 'approvals', label: 'Approvals' },
  { id: 'jobs', label: 'Jobs' },
  { id: 'audit', label: 'Audit chain' },
];

/** Which collections an event changes. */
function kindsOf(type: string): Kind[] {
  if (type.startsWith('instance.')) return ['instances', 'nodes', 'jobs'];
  if (type.startsWith('job.')) return ['jobs'];
  if (type.startsWith('node.')) return ['nodes'];
  if (type.startsWith('alert.')) return ['alerts'];
  if (type.startsWith('approval.')) return ['approvals'];
  return [];
}

const route = (): string[] => (location.hash.replace(/^#\/?/, '') || 'nodes').split('/');

/** The logged-in dashboard. */
export function App(props: { onLogout: () => void }) {
  const [data, setData] = useState<Data>({
    nodes: [],
    instances: [],
    alerts: [],
    approvals: [],
    approvalsAvailable: true,
    jobs: [],
  });
  const [live, setLive] = useState<LiveState>('connecting');
  const [feed, setFeed] = useState<readonly LiveEvent[]>([]);
  const [path, setPath] = useState<string[]>(route());
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const pending = useRef(new Set<Kind>());
  const timer = useRef<number | undefined>(undefined);

  const load = useCallback(async (kinds: readonly Kind[]): Promise<void> => {
    try {
      const next: Partial<{ -readonly [K in keyof Data]: Data[K] }> = {};
      await Promise.all(
        kinds.map(async (k) => {
          if (k === 'nodes') next.nodes = (await get<{ nodes: NodeView[] }>('/v1/nodes')).nodes;
          if (k === 'instances')
            next.instances = (await get<{ instances: Placement[] }>('/v1/instances')).instances;
          if (k === 'alerts') next.alerts = (await get<{ alerts: AlertRecord[] }>('/v1/alerts')).alerts;
          if (k === 'jobs') next.jobs = (await get<{ jobs: JobStatusAnswer[] }>('/v1/jobs')).jobs;
          if (k === 'approvals') {
            try {
              next.approvals = (await get<{ approvals: Approval[] }>('/v1/approvals')).approvals;
              next.approvalsAvailable = true;
            } catch (err) {
              if (!(err instanceof ApiCallError && (err.code === 'not_found' || err.status === 404)))
                throw err;
              next.approvals = [];
              next.approvalsAvailable = false;
            }
          }
        }),
      );
      setData((d) => ({ ...d, ...next }));
      setVersion((v) => v + 1);
      setError(null);
    } catch (err) {
      setError(String(err instanceof Error ? err.message : err));
    }
  }, []);

  /** Reloads `kinds` soon, folding a burst of events into one reload. */
  const soon = useCallback(
    (kinds: readonly Kind[]): void => {
      for (const k of kinds) pending.current.add(k);
      if (timer.current !== undefined) return;
      timer.current = window.setTimeout(() => {
        timer.current = undefined;
        const ks = [...pending.current];
        pending.current.clear();
        void load(ks);
      }, 50);
    },
    [load],
  );

  useEffect(() => {
    const onHash = (): void => setPath(route());
    window.addEventListener('hashchange', onHash);
    const stop = follow({
      onEvent: (e) => {
        setFeed((f) => [e, ...f].slice(0, 50));
        soon(kindsOf(e.type));
      },
      onReset: () => soon(['nodes', 'instances', 'alerts', 'approvals', 'jobs']),
      onState: setLive,
    });
    return () => {
      stop();
      window.removeEventListener('hashchange', onHash);
    };
  }, [soon]);

  const logout = async (): Promise<void> => {
    await call('DELETE', '/v1/session').catch(() => undefined);
    props.onLogout();
  };
  const [tab, sub] = path;
  const open = data.alerts.filter((a) => a.acked_at_ms === null).length;
  const waiting = data.approvals.filter((a) => a.state === 'pending').length;
  const reloadAll = (): void => soon(['nodes', 'instances', 'alerts', 'approvals', 'jobs']);
  let view: VNode;
  if (tab === 'instances' && sub !== undefined) {
    view = html`<${Instance} id=${sub} placement=${data.instances.find((i) => i.instance_id === sub)} onChange=${reloadAll} />`;
  } else if (tab === 'instances') view = html`<${Instances} instances=${data.instances} />`;
  else if (tab === 'alerts') view = html`<${Alerts} alerts=${data.alerts} onChange=${reloadAll} />`;
  else if (tab === 'approvals')
    view = html`<${Approvals} approvals=${data.approvals} available=${data.approvalsAvailable} onChange=${reloadAll} />`;
  else if (tab === 'jobs') view = html`<${Jobs} jobs=${data.jobs} />`;
  else if (tab === 'audit') view = html`<${Audit} selected=${sub} version=${version} />`;
  else
    view = html`<section aria-labelledby="nodes-h"><h2 id="nodes-h">Nodes</h2><${Nodes} nodes=${data.nodes} /></section>`;
  return html`<div class="app">
    <header>
      <h1>Heddle</h1>
      <nav aria-label="Sections"><ul>
        ${TABS.map(
          (t) =>
            html`<li key=${t.id}><a href=${`#/${t.id}`} aria-current=${t.id === (tab ?? 'nodes') ? 'page' : undefined}>${t.label}${
              t.id === 'alerts' && open > 0
                ? html` <span class="count alert" aria-label=${`${open} open`}>${open}</span>`
                : null
            }${t.id === 'approvals' && waiting > 0 ? html` <span class="count" aria-label=${`${waiting} pending`}>${waiting}</span>` : null}</a></li>`,
        )}
      </ul></nav>
      <span class=${`live live-${live}`} role="status" id="live-state">${live === 'live' ? '● live' : live === 'connecting' ? '○ connecting' : '○ reconnecting'}</span>
      <button type="button" onClick=${logout}>Log out</button>
    </header>
    <div class="body">
      <main>
        ${error === null ? null : html`<p role="alert" class="error">${error}</p>`}
        ${view}
      </main>
      <aside aria-labelledby="feed-h">
        <h2 id="feed-h">Live events</h2>
        <ol class="feed" aria-live="polite" id="feed">
          ${feed.length === 0 ? html`<li class="empty">Waiting for events…</li>` : feed.map((e) => html`<li key=${e.id} data-type=${e.type}><time>${clock(e.at_ms)}</time> <span class="type">${e.type}</span> ${describe(e)}</li>`)}
        </ol>
      </aside>
    </div>
  </div>`;
}
