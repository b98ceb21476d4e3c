import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseControlLine } from './control.js';
import { HollowError } from './errors.js';

describe('control lines', () => {
  it('parses each command', () => {
    expect(parseControlLine('{"cmd":"kill","hosts":[1,2]}')).toEqual({ cmd: 'kill', hosts: [1, 2] });
    expect(parseControlLine('{"cmd":"revive","from":0,"to":9}')).toEqual({ cmd: 'revive', from: 0, to: 9 });
    expect(parseControlLine('{"cmd":"stats"}')).toEqual({ cmd: 'stats' });
  });

  it('refuses junk with invalid_command naming the field', () => {
    const refused = (line: string): HollowError => {
      try {
        parseControlLine(line);
      } catch (err) {
        expect(err).toBeInstanceOf(HollowError);
        // cast: checked just above
        return err as HollowError;
      }
      throw new Error(`accepted ${line}`);
    };
    expect(refused('kill 1').field).toBe('cmd');
    expect(refused('{"cmd":"explode"}').code).toBe('invalid_command');
    expect(refused('{"cmd":"kill","hosts":[-1]}').field).toBe('hosts.0');
    expect(refused('{"cmd":"kill","hosts":[1],"extra":1}').code).toBe('invalid_command');
    expect(refused('{"cmd":"stats","hosts":[1]}').code).toBe('invalid_command');
  });

  it('never throws anything but invalid_command, whatever the line', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (line) => {
          try {
            parseControlLine(line);
          } catch (err) {
            expect(err).toBeInstanceOf(HollowError);
            expect(err).toMatchObject({ code: 'invalid_command' });
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
