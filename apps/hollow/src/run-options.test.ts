import { parseArgv } from '@heddle/cli-kit';
import { describe, expect, it } from 'vitest';
import { RUN } from './command-defs.js';
import { runOptions, seededRandom } from './run-options.js';

const parse = (...args: string[]) =>
  runOptions(parseArgv('heddle-hollow', RUN, ['--trust', 't.json', ...args]), '/w');

describe('run options', () => {
  it('takes the defaults and resolves paths against the working directory', () => {
    const o = parse();
    expect(o).toMatchObject({
      dir: '/w/hollow',
      trust: '/w/t.json',
      count: 100,
      routes: ['native'],
      tier: 'paired',
      startLatencyMs: 0,
      failureRate: 0,
      chain: 'file',
      listen: '127.0.0.1',
    });
    expect(o.seed).toBeUndefined();
    expect(o.leaseSecs).toBeUndefined();
    expect(parse('--controller-lease-secs', '30', '--seed', '7', '--routes', 'native,wasi')).toMatchObject({
      leaseSecs: 30,
      seed: 7,
      routes: ['native', 'wasi'],
    });
  });

  it('refuses a bad value with bad_flag naming the flag', () => {
    const cases: [string[], string][] = [
      [['--count', '0'], 'count'],
      [['--count', '20001'], 'count'],
      [['--count', 'many'], 'count'],
      [['--failure-rate', '1.5'], 'failure-rate'],
      [['--start-latency-ms=-1'], 'start-latency-ms'],
      [['--routes', 'native,native'], 'routes'],
      [['--routes', 'container'], 'routes'],
      [['--chain', 'disk'], 'chain'],
      [['--controller', 'abc'], 'controller'],
      [['--controller-lease-secs', '0'], 'controller-lease-secs'],
    ];
    for (const [args, flag] of cases) {
      expect(() => parse(...args), args.join(' ')).toThrow(
        expect.objectContaining({ code: 'bad_flag', field: flag }),
      );
    }
  });

  it('seeds the failure dice reproducibly, within [0, 1)', () => {
    const a = seededRandom(9);
    const b = seededRandom(9);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
