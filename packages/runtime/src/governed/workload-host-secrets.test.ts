import { canonicalJson, type JsonValue } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../errors.js';
import { AUDIT_LIMITS, auditJson, evidenceForAudit, utf8Tail } from './host-audit.js';
import { REDACTED, redactSecrets } from './host-redact.js';
import { configFor, harness, RecordingRuntime, seen, signedCog } from './workload-host-fixtures.js';

/** Every string in a JSON value. */
function strings(v: JsonValue, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

const token = fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/);

describe('WorkloadHost: the ingest token never reaches the chain', () => {
  it('whatever the adapter echoes, across every transition (property)', async () => {
    const w = await signedCog();
    await fc.assert(
      fc.asyncProperty(token, fc.integer({ min: 1, max: 15 }), async (secret, cut) => {
        const runtime = new RecordingRuntime();
        const { chain, host } = await harness({ runtime });
        runtime.preemptions = [{ registry: 'seed', workloadId: 'radar', version: '1.0.0' }];
        runtime.evidence = {
          args: ['/bin/run', `--token=${secret}`, secret.slice(0, -cut)],
          stdout: `${secret.slice(cut)} was the tail of my token; again: ${secret}\n`,
          stderr: `COGNITUM_COG_TOKEN=${secret}`,
          notes: [`env had ${secret}`],
        };
        runtime.logLines = [`token ${secret}`];
        const h = await host.load(
          w,
          configFor(secret, { ingestUrl: `https://ingest.example/x?t=${secret}` }),
        );
        runtime.failures.set('start', new RuntimeError('runtime', `spawn failed with token ${secret}`));
        await host.start(h).catch(() => undefined);
        const consoled = await host.console(h, 'status');
        const stopped = await host.stop(h, 10);
        const logs = await host.logs(h, 10);
        runtime.failures.set('unload', new Error(`cannot remove ${secret}`));
        await host.unload(h).catch(() => undefined);
        await host.revokeTeardown(h, 10, `revoked ${secret}`).catch(() => undefined);

        for (const e of chain) {
          const text = canonicalJson(e.payload);
          expect(text).not.toContain(secret);
          for (const s of strings(e.payload)) expect(s).not.toContain(secret);
        }
        for (const ev of [consoled, stopped]) {
          expect(JSON.stringify(ev)).not.toContain(secret);
          expect(ev.stdout).toContain(REDACTED);
        }
        expect(logs.join('\n')).not.toContain(secret);
        const loadEvent = seen(chain).find(
          (e) => e.kind === 'workload.load' && e.source === 'workload.runtime',
        );
        expect(loadEvent?.p.host_contract).toMatchObject({ ingest_token: 'set' });
      }),
      { numRuns: 25 },
    );
  });

  it('a token that fails the load is not chained either', async () => {
    const secret = 'tok_0123456789abcdef0123';
    const { chain, runtime, host } = await harness();
    runtime.failures.set('load', new RuntimeError('invalid_config', `bad token ${secret}`));
    await host.load(await signedCog(), configFor(secret)).catch(() => undefined);
    expect(chain.size).toBe(2);
    for (const e of chain) expect(canonicalJson(e.payload)).not.toContain(secret);
  });
});

describe('redactSecrets', () => {
  it('removes whole occurrences and pieces of 8+ characters cut at either edge', () => {
    const s = 'ABCDEFGHIJKLMNOP';
    expect(redactSecrets(`x${s}y${s}`, [s])).toBe(`x${REDACTED}y${REDACTED}`);
    expect(redactSecrets(`${s.slice(5)} tail`, [s])).toBe(`${REDACTED} tail`);
    expect(redactSecrets(`head ${s.slice(0, 9)}`, [s])).toBe(`head ${REDACTED}`);
    expect(redactSecrets(`${s.slice(10)} short piece`, [s])).toBe(`${s.slice(10)} short piece`);
    expect(redactSecrets('nothing here', [s, ''])).toBe('nothing here');
  });
});

describe('chained evidence is bounded and canonical', () => {
  it('keeps the last 4 KiB of each stream, counts what it dropped, never splits a character', () => {
    const big = `${'é'.repeat(5000)}END`;
    const ev = evidenceForAudit({
      instanceId: 'i',
      args: Array.from({ length: 200 }, (_, i) => `arg${i}`.repeat(100)),
      exitCode: 1.5,
      signal: null,
      startedAtMs: 1e300,
      endedAtMs: Number.NaN,
      killed: true,
      stdout: big,
      stdoutTruncatedBytes: 10,
      stderr: '\ud800 lone surrogate',
      stderrTruncatedBytes: 0,
      notes: ['memory limit exceeded'],
    });
    const out = String(ev.stdout);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(AUDIT_LIMITS.outputBytes);
    expect(out.endsWith('END')).toBe(true);
    expect(out.startsWith('é')).toBe(true);
    expect(ev.stdout_truncated_bytes).toBe(10 + Buffer.byteLength(big) - Buffer.byteLength(out));
    expect(ev.args).toHaveLength(AUDIT_LIMITS.listEntries);
    expect(ev.exit_code).toBe(1);
    expect(ev.started_at_ms).toBeNull();
    expect(ev.ended_at_ms).toBeNull();
    expect(() => canonicalJson(ev)).not.toThrow();
    expect(Buffer.byteLength(canonicalJson(ev))).toBeLessThan(64 * 1024);
  });

  it('utf8Tail keeps short text whole', () => {
    expect(utf8Tail('abc', 10)).toEqual({ text: 'abc', dropped: 0 });
  });

  it('auditJson makes any value chainable (property)', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true }), (v) => {
        expect(() => canonicalJson(auditJson(v))).not.toThrow();
      }),
    );
  });
});
