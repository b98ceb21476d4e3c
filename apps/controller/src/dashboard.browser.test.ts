// The dashboard in a real browser: playwright-core drives Debian's chromium (/usr/bin/chromium, never a
// downloaded browser) against the operator API server with the plane's event stream and the built
// dashboard, over a real control plane (SQLite, chain, gate) and real hosts on 127.0.0.1. Screenshots
// go to apps/controller/test-artifacts/ (gitignored).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import { parseJobSpec } from '@heddle/control-plane/contract';
import {
  examplePackage,
  openPlane,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from '@heddle/control-plane/testing';
import { parsePolicy } from '@heddle/gate';
import { ApiServer, StaticUi } from '@heddle/operator-api';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHandlers } from './api-handlers.js';

const CHROMIUM = '/usr/bin/chromium';
// CI installs chromium (.ci/run) and must run these; elsewhere a machine without it skips them, saying so.
const RUN = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!RUN)
  console.warn(
    `skipping the dashboard's browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)`,
  );
const TOKEN = 'b'.repeat(64);
const ARTIFACTS = resolve(import.meta.dirname, '../test-artifacts');
const TUNABLES = { deadAfterMs: 1_000, suspectAfterMs: 500 };
/** Places on a node of the pinned tier are deferred to an operator; everything else is permitted. */
const POLICY = parsePolicy({
  version: 1,
  name: 'dashboard-test',
  rules: [
    {
      id: 'ask',
      effect: 'defer',
      actions: ['workload.place'],
      min_node_tier: 'pinned',
      reason: 'places on pinned nodes need an operator',
    },
    {
      id: 'all',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
});

let offset = 0;
const now = (): number => Date.now() + offset;
let a: TestHost;
let b: TestHost;
let c: TestHost;
let p: TestPlane;
let api: ApiServer;
let context: BrowserContext;
let page: Page;
let pkg: string;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

beforeAll(async () => {
  if (!RUN) return;
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const uiDir = tempDir('heddle-ui-');
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../scripts/build-ui.mjs'), uiDir]);
  [a, b, c, p, pkg] = await Promise.all([
    startHost(['wasi']),
    startHost(['wasi']),
    startHost(['wasi']),
    openPlane(undefined, TUNABLES, now, { policy: POLICY, approvals: {} }),
    examplePackage('wasi-cog', false, true),
  ]);
  api = await ApiServer.listen({
    handlers: planeHandlers(p.plane, { chain: p.chain }),
    auth: { token: TOKEN },
    log: new Logger(() => {}),
    port: 0,
    events: p.plane.events,
    ui: new StaticUi(uiDir),
  });
  await p.plane.addNode(a.url, { tier: 'paired' });
  context = await chromium.launchPersistentContext(tempDir('heddle-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 760 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(10_000);
}, 60_000);

afterAll(async () => {
  await context?.close();
  await api?.close(500);
  await p?.close();
  await a?.close();
  await b?.close();
  await c?.close();
});

describe.skipIf(!RUN)('the dashboard in chromium', () => {
  it('login: a labelled token field; a wrong token is refused; keyboard only (Tab to the button, Enter) logs in with an HttpOnly cookie', async () => {
    await page.goto(`${api.url}/ui/`);
    const field = page.getByLabel('Operator API token');
    await field.fill('not-the-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('refused');
    await field.fill(TOKEN);
    await shot('login');
    await field.focus();
    await page.keyboard.press('Tab'); // the help text is not focusable: next is the button
    expect(await page.locator(':focus').textContent()).toBe('Log in');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const cookies = await context.cookies();
    expect(cookies).toEqual([
      expect.objectContaining({ name: 'heddle_session', httpOnly: true, sameSite: 'Strict' }),
    ]);
    expect(cookies[0]?.value).not.toBe(TOKEN);
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate('document.cookie')).toBe(''); // HttpOnly: not readable by scripts
    await page.locator('#live-state', { hasText: 'live' }).waitFor();
    await page.locator(`tr[data-node="${a.service.nodeId}"]`).waitFor();
  });

  it('a place appears live, without a reload; the instance shows its logs and its decision with the explain table', async () => {
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.getByText('No instances on any node').waitFor();
    const r = await p.plane.place({ package_dir: pkg, mode: { type: 'interval', secs: 60 }, start: true });
    const id = r.instance?.instance_id as string;
    await page.locator(`tr[data-instance="${id}"]`).waitFor();
    await page.locator('#feed li[data-type="instance.placed"]').first().waitFor();
    await shot('instances');
    await page.getByRole('link', { name: id }).click();
    await page.getByRole('table', { name: 'Explain table' }).waitFor();
    expect(await page.locator('.explain .verdict-chosen').count()).toBe(1);
    await page.locator('#instance-state', { hasText: 'running' }).waitFor();
    await shot('instance');
  });

  it('stop an instance: the state changes live to stopped', async () => {
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('#instance-state', { hasText: 'stopped' }).waitFor();
    await page.locator('#feed li[data-type="instance.state_changed"]').first().waitFor();
    expect(
      await page.locator('#feed li[data-type="instance.state_changed"]').first().textContent(),
    ).toContain('stopped');
  });

  it('a host dies: its node turns dead and an alert appears live; it can be acknowledged by keyboard', async () => {
    await p.plane.addNode(b.url, { tier: 'paired' });
    const r = await p.plane.place({
      package_dir: pkg,
      mode: { type: 'interval', secs: 60 },
      start: true,
      node: b.service.nodeId,
    });
    const id = r.instance?.instance_id as string;
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByText('No open alerts.').waitFor();
    await b.server.close();
    await p.plane.tick();
    offset += TUNABLES.deadAfterMs + 100;
    await p.plane.tick();
    const row = page.locator(`tr[data-alert]`, { hasText: id });
    await row.waitFor();
    expect(await row.textContent()).toContain('pinned');
    await page.locator('nav .count.alert', { hasText: '1' }).waitFor();
    await shot('alerts');
    const ack = row.getByRole('button', { name: /Acknowledge/ });
    await ack.focus();
    await page.keyboard.press('Enter');
    await page.getByText('No open alerts.').waitFor();
    await page.getByRole('link', { name: 'Nodes' }).click();
    await page.locator(`tr[data-node="${b.service.nodeId}"] .liveness-dead`).waitFor();
    await shot('nodes');
  });

  it('approve a deferral: the held place shows as pending, Approve places it and the instance appears', async () => {
    await p.plane.addNode(c.url, { tier: 'pinned', key: Buffer.from(c.keys.publicKey).toString('hex') });
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByText('Nothing waits for an approval.').waitFor();
    const r = await p.plane.place({
      package_dir: pkg,
      mode: { type: 'interval', secs: 60 },
      start: true,
      node: c.service.nodeId,
    });
    expect(r.status).toBe('awaiting_approval');
    const row = page.locator(`tr[data-approval="${r.approval_id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('places on pinned nodes need an operator');
    await page.locator('nav .count', { hasText: '1' }).first().waitFor();
    await shot('approvals');
    await row.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Nothing waits for an approval.').waitFor();
    await page.locator(`tr[data-approval="${r.approval_id}"] .approval-approved`).waitFor();
    await page.locator('#feed li[data-type="approval.approved"]').first().waitFor();
    await page.locator(`tr[data-approval="${r.approval_id}"]`, { hasText: 'place placed' }).waitFor();
    expect(c.service.instanceIds()).toHaveLength(1);
    const [approved] = await p.plane.approvals('approved');
    expect(approved?.decided_by).toBeTruthy();
  });

  it('the audit chain: verified head and an event with its inclusion proof', async () => {
    await page.getByRole('link', { name: 'Audit chain' }).click();
    await page.locator('#chain-verify', { hasText: 'verified' }).waitFor();
    await page.getByRole('link', { name: 'Event 0 and its inclusion proof' }).click();
    await page.getByText('Inclusion proof').waitFor();
    await page.getByText("matches the head's root").waitFor();
    await shot('audit');
  });

  it('jobs: a clear empty state, then the job a run stores, live from the event stream', async () => {
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByText('This controller has no jobs yet.').waitFor();
    await p.plane.runJob(
      parseJobSpec({ name: 'agg', package: pkg, mode: { type: 'interval', secs: 60 }, count: 1 }),
    );
    const row = page.locator('tr[data-job="agg"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/agg.*service.*running.*1.*rolling.*0\/1/);
    await shot('jobs');
  });

  it('logging out ends the session: the API refuses the cookie and the login form is back', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Operator API token').waitFor();
    const status = await page.evaluate(async () => (await fetch('/v1/nodes')).status);
    expect(status).toBe(401);
  });
});
