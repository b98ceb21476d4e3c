import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sseFrame } from './event-stream.js';
import { SseParser } from './sse-parser.js';

/** Cuts `text` at the given offsets. */
function chunks(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const c of at) {
    out.push(text.slice(prev, c));
    prev = c;
  }
  out.push(text.slice(prev));
  return out;
}

describe('SseParser', () => {
  it('parses the fields of the standard, comments and defaults', () => {
    const p = new SseParser();
    const text =
      'retry: 1500\n: a comment\n\ndata: one\ndata:two\n\nid: 7\nevent: x\ndata\n\nid\nunknown: 1\ndata: a: b\n\n';
    expect(p.feed(text)).toEqual([
      { type: 'message', data: 'one\ntwo', lastEventId: '' },
      { type: 'x', data: '', lastEventId: '7' },
      { type: 'message', data: 'a: b', lastEventId: '' },
    ]);
    expect(p.retryMs).toBe(1500);
  });

  it('an event without data is not dispatched; an id with NUL is ignored; CR and CRLF end lines', () => {
    const p = new SseParser();
    expect(p.feed('id: 1\r\nevent: e\r\r')).toEqual([]);
    expect(p.lastEventId).toBe('1');
    expect(p.feed('id: 2\u0000\rdata: d\r\n\r\n')).toEqual([
      { type: 'message', data: 'd', lastEventId: '1' },
    ]);
  });

  it('property: the server frames parse back the same, however the text is cut into chunks', () => {
    const frame = fc.record({
      id: fc.stringMatching(/^[0-9a-f]{4}-[1-9][0-9]{0,3}$/),
      type: fc.stringMatching(/^[a-z]{1,8}\.[a-z_]{1,12}$/),
      data: fc.jsonValue(),
    });
    fc.assert(
      fc.property(
        fc.array(frame, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (frames, cuts) => {
          const text = `retry: 2000\n\n${frames.map((f) => `${sseFrame(f.id, f.type, f.data)}: heartbeat\n\n`).join('')}`;
          const p = new SseParser();
          const got = chunks(text, cuts).flatMap((c) => p.feed(c));
          expect(got).toEqual(
            frames.map((f) => ({ type: f.type, data: JSON.stringify(f.data), lastEventId: f.id })),
          );
          // JSON.stringify never emits a raw line break, so each event is one data line.
          expect(got.map((m) => JSON.parse(m.data))).toEqual(
            frames.map((f) => JSON.parse(JSON.stringify(f.data))),
          );
        },
      ),
    );
  });

  it('junk never throws (but a line over the limit does) and never dispatches without a blank line', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (junk) => {
        const p = new SseParser();
        const got = p.feed(junk.replace(/[\r\n]+$/, ''));
        // Only lines ended before the last one can dispatch.
        for (const m of got) expect(typeof m.data).toBe('string');
      }),
    );
    expect(() => new SseParser({ maxLineChars: 10 }).feed('data: 0123456789')).toThrow(RangeError);
  });
});
