import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { exitQuietlyOnClosedPipe, keepRunningOnClosedPipe } from './closed-pipe.js';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`write ${code}`), { code });

describe('exitQuietlyOnClosedPipe', () => {
  it('exits 0 on EPIPE of either stream and rethrows any other error', () => {
    const out = new EventEmitter();
    const err = new EventEmitter();
    const exits: number[] = [];
    exitQuietlyOnClosedPipe([out, err], (code) => exits.push(code));
    out.emit('error', errno('EPIPE'));
    err.emit('error', errno('EPIPE'));
    expect(exits).toEqual([0, 0]);
    expect(() => out.emit('error', errno('EIO'))).toThrow('write EIO');
    expect(exits).toEqual([0, 0]);
    // A daemon keeps running: the lines are lost, the process is not ended.
    keepRunningOnClosedPipe();
    out.emit('error', errno('EPIPE'));
    expect(exits).toEqual([0, 0]);
  });
});
