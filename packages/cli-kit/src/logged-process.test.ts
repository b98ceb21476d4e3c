import { describe, expect, it } from 'vitest';
import { killLogged, spawnLogged, waitForLog } from './logged-process.js';

const script = (body: string): string[] => ['-e', body];

describe('spawnLogged', () => {
  it('collects JSON log lines (and marks lines that are not JSON), and waits for one', async () => {
    const d = spawnLogged(
      process.execPath,
      script(
        'console.log(JSON.stringify({msg:"starting"})); console.log("plain"); setTimeout(() => console.log(JSON.stringify({msg:"listening", port: 1})), 50); setTimeout(() => {}, 5000);',
      ),
      { cwd: process.cwd() },
    );
    try {
      expect(await waitForLog(d, 'listening')).toEqual({ msg: 'listening', port: 1 });
      expect(d.lines[1]).toEqual({ msg: '(not JSON)', text: 'plain' });
    } finally {
      await killLogged(d);
    }
    expect(d.proc.signalCode).toBe('SIGKILL');
  });

  it('rejects with what was logged when the process exits before the line', async () => {
    const d = spawnLogged(process.execPath, script('console.error("boom"); process.exit(3)'), {
      cwd: process.cwd(),
    });
    await expect(waitForLog(d, 'listening')).rejects.toThrow(/no "listening" line; .*stderr boom/s);
    expect(await d.exited).toBe(3);
  });
});
