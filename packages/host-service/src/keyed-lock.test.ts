import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyedLock } from './keyed-lock.js';

describe('KeyedLock', () => {
  it('runs work under one key one at a time, in call order', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const job = (name: string, ms: number) => async () => {
      events.push(`${name} start`);
      await sleep(ms);
      events.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([
      lock.run('k', job('a', 30)),
      lock.run('k', job('b', 5)),
      lock.run('k', job('c', 1)),
    ]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(lock.size).toBe(0);
  });

  it('runs work under different keys concurrently', async () => {
    const lock = new KeyedLock();
    let running = 0;
    let peak = 0;
    const job = async (): Promise<void> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(20);
      running--;
    };
    const all = Promise.all([lock.run('a', job), lock.run('b', job), lock.run('c', job)]);
    expect(lock.size).toBe(3);
    await all;
    expect(peak).toBe(3);
    expect(lock.size).toBe(0);
  });

  it('a rejection is passed to its caller and does not block the next call', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const failing = lock.run('k', async () => {
      await sleep(10);
      events.push('fail');
      throw new Error('boom');
    });
    const next = lock.run('k', async () => {
      events.push('next');
      return 42;
    });
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe(42);
    expect(events).toEqual(['fail', 'next']);
    expect(lock.size).toBe(0);
  });

  it('a synchronous throw inside fn rejects only that call', async () => {
    const lock = new KeyedLock();
    const bad = lock.run('k', () => {
      throw new Error('sync');
    });
    await expect(bad).rejects.toThrow('sync');
    await expect(lock.run('k', async () => 'ok')).resolves.toBe('ok');
    expect(lock.size).toBe(0);
  });

  it('size counts keys with queued or running work and returns to 0', async () => {
    const lock = new KeyedLock();
    expect(lock.size).toBe(0);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = lock.run('k', () => gate);
    const second = lock.run('k', async () => undefined);
    expect(lock.size).toBe(1);
    release();
    await first;
    await second;
    expect(lock.size).toBe(0);
  });

  it('a call made after the queue drained runs at once', async () => {
    const lock = new KeyedLock();
    await lock.run('k', async () => undefined);
    expect(lock.size).toBe(0);
    const events: string[] = [];
    await lock.run('k', async () => {
      events.push('ran');
    });
    expect(events).toEqual(['ran']);
  });
});
