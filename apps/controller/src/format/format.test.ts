import { describe, expect, it } from 'vitest';
import { colourEnabled, painter, paintFor, stripAnsi, visibleWidth } from './colour.js';
import { age, bytes, shortDuration, shortId } from './duration.js';
import { bar, percent, progressLine, TransferProgressBar } from './progress.js';
import { isNumeric, keyValues, table } from './table.js';

describe('table', () => {
  it('aligns columns by content, numbers to the right, no trailing spaces', () => {
    const lines = table(
      ['NAME', 'COUNT', 'NOTE'],
      [
        ['alpha', '3', 'x'],
        ['b', '120', ''],
      ],
    );
    expect(lines).toEqual(['NAME   COUNT  NOTE', 'alpha      3  x', 'b        120']);
  });

  it('treats - as empty when deciding a column is numeric, and honours an explicit alignment', () => {
    expect(table(['N'], [['-'], ['12s']])).toEqual(['  N', '  -', '12s']);
    expect(table([{ header: 'ID', align: 'left' }], [['7'], ['100']])).toEqual(['ID', '7', '100']);
  });

  it('ignores colour codes when measuring, and fills short rows', () => {
    const paint = painter(true);
    const lines = table(['A', 'B'], [[paint('red', 'xx'), 'y'], ['zzzz']]);
    expect(lines.map(stripAnsi)).toEqual(['A     B', 'xx    y', 'zzzz']);
  });

  it('reads numbers with a short unit as numbers', () => {
    for (const s of ['1', '3.5', '12s', '40%', '-2']) expect(isNumeric(s)).toBe(true);
    for (const s of ['a1', '1.2.3', 'running', '']) expect(isNumeric(s)).toBe(false);
  });

  it('pads keys of key/value lines to the widest', () => {
    expect(
      keyValues([
        ['a', '1'],
        ['long', '2'],
      ]),
    ).toEqual(['a:    1', 'long: 2']);
  });
});

describe('colour', () => {
  it('is off unless standard output is a terminal', () => {
    expect(colourEnabled({})).toBe(false);
    expect(colourEnabled({ isTty: false, env: {} })).toBe(false);
    expect(paintFor({ isTty: false })('red', 'x')).toBe('x');
  });

  it('is on for a terminal, off with NO_COLOR or --json', () => {
    expect(colourEnabled({ isTty: true, env: {} })).toBe(true);
    expect(colourEnabled({ isTty: true, env: { NO_COLOR: '1' } })).toBe(false);
    expect(colourEnabled({ isTty: true, env: { NO_COLOR: '' } })).toBe(true);
    expect(colourEnabled({ isTty: true, env: {} }, true)).toBe(false);
    const red = paintFor({ isTty: true, env: {} })('red', 'x');
    expect(red).toBe('\u001b[31mx\u001b[39m');
    expect(visibleWidth(red)).toBe(1);
  });
});

describe('durations and sizes', () => {
  it('shortens ages', () => {
    expect(shortDuration(0)).toBe('0s');
    expect(shortDuration(850)).toBe('850ms');
    expect(shortDuration(12_400)).toBe('12s');
    expect(shortDuration(3 * 60_000 + 5)).toBe('3m');
    expect(shortDuration(5 * 3_600_000)).toBe('5h');
    expect(shortDuration(3 * 86_400_000)).toBe('3d');
    expect(shortDuration(-5)).toBe('0s');
    expect(age(null, 10)).toBe('-');
    expect(age(1_000, 61_000)).toBe('1m');
  });

  it('formats bytes and short ids', () => {
    expect(bytes(512)).toBe('512 B');
    expect(bytes(1536)).toBe('1.5 KiB');
    expect(bytes(12 * 1024 * 1024)).toBe('12.0 MiB');
    expect(shortId('0123456789abcdef')).toBe('01234567');
  });
});

describe('progress', () => {
  const node = 'aa'.repeat(16);
  const other = 'bb'.repeat(16);

  it('computes percentages and bars', () => {
    expect(percent(50, 200)).toBe(25);
    expect(percent(0, 0)).toBe(100);
    expect(bar(1, 2, 4)).toBe('[##..]');
    expect(progressLine({ node_id: node, bytes: 1024, total: 2048 }, 4)).toBe(
      'sending to aaaaaaaa [##..]  50%  1.0 KiB / 2.0 KiB',
    );
  });

  it('prints one line per 25% step when not on a terminal', () => {
    const lines: string[] = [];
    const raw: string[] = [];
    const p = new TransferProgressBar(
      { line: (t) => lines.push(t), raw: (t) => raw.push(t) },
      { tty: false },
    );
    for (let b = 0; b <= 100; b += 5) p.update({ node_id: node, bytes: b, total: 100 });
    p.update({ node_id: other, bytes: 100, total: 100 });
    p.done();
    expect(raw).toEqual([]);
    expect(lines.map((l) => /(\d+)%/.exec(l)?.[1])).toEqual(['25', '50', '75', '100', '100']);
    expect(lines[4]).toContain('bbbbbbbb');
  });

  it('redraws in place with \\r on a terminal, a new line per node, and ends with a newline', () => {
    const raw: string[] = [];
    const lines: string[] = [];
    const p = new TransferProgressBar({ line: (t) => lines.push(t), raw: (t) => raw.push(t) }, { tty: true });
    p.update({ node_id: node, bytes: 10, total: 100 });
    p.update({ node_id: node, bytes: 100, total: 100 });
    p.update({ node_id: other, bytes: 5, total: 10 });
    p.done();
    expect(lines).toEqual([]);
    expect(raw[0]?.startsWith('\r')).toBe(true);
    expect(raw[1]).toMatch(/^\rsending to aaaaaaaa .*100%/);
    expect(raw[2]).toBe('\n');
    expect(raw[3]).toMatch(/^\rsending to bbbbbbbb .* 50%/);
    expect(raw[4]).toBe('\n');
  });
});
