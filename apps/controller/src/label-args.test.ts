import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.js';
import { parseConstraint, parseLabelWords, parseSpread } from './label-args.js';

const name = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,62}$/);
const value = fc.stringMatching(/^[\x21-\x2b\x2d-\x3c\x3e-\x7e]{0,40}$/);

function refusal(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('label words (heddle node label)', () => {
  it('sets key=value and removes key-', () => {
    expect(parseLabelWords(['room=kitchen', 'camera-', 'floor=1'])).toEqual({
      set: { room: 'kitchen', floor: '1' },
      remove: ['camera'],
    });
    expect(parseLabelWords(['empty='])).toEqual({ set: { empty: '' }, remove: [] });
  });

  it('round-trips any valid names and values', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, minLength: 1, maxLength: 8 }),
        (pairs) => {
          const r = parseLabelWords(pairs.map(([n, v]) => `${n}=${v}`));
          expect(r.set).toEqual(Object.fromEntries(pairs));
          expect(r.remove).toEqual([]);
        },
      ),
    );
  });

  it('refuses junk with invalid_input naming the word, never another error', () => {
    for (const bad of [
      [],
      ['room'],
      ['=x'],
      ['Room=x'],
      ['room=a b'],
      ['room=a=b'],
      ['-'],
      ['room=x', 'room-'],
      [`${'a'.repeat(64)}=x`],
    ]) {
      const e = refusal(() => parseLabelWords(bad));
      expect([e.code, e.field]).toEqual(['invalid_input', 'labels']);
    }
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 30 }), { maxLength: 5 }), (words) => {
        try {
          parseLabelWords(words);
        } catch (err) {
          expect(err).toBeInstanceOf(CliError);
          expect((err as CliError).code).toBe('invalid_input');
        }
      }),
    );
  });
});

describe('--constraint and --spread (heddle place)', () => {
  it('parses label.<name>=<value>', () => {
    expect(parseConstraint('label.room=kitchen')).toEqual({ label: 'room', value: 'kitchen' });
    fc.assert(
      fc.property(name, value, (n, v) => {
        expect(parseConstraint(`label.${n}=${v}`)).toEqual({ label: n, value: v });
      }),
    );
    expect(parseSpread('room')).toBe('room');
  });

  it('refuses junk naming the flag', () => {
    for (const bad of [
      'room=kitchen',
      'label.room',
      'label.=x',
      'label.Room=x',
      'label.room=a,b',
      'arch=x',
    ]) {
      expect(refusal(() => parseConstraint(bad)).field, bad).toBe('constraint');
    }
    for (const bad of ['', 'Room', 'a b', 'x=y']) {
      const e = refusal(() => parseSpread(bad));
      expect(e.field, bad).toBe('spread');
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (w) => {
        try {
          parseConstraint(w);
        } catch (err) {
          expect((err as CliError).field).toBe('constraint');
        }
      }),
    );
  });
});
