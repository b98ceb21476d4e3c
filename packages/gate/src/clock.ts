/** Time as the approval queue sees it: injectable so that tests can move it by hand. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` after `ms` milliseconds; returns a function that cancels the timer. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** The real clock (`Date.now`, `setTimeout`). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, Math.min(ms, 2_147_483_647)));
    return () => clearTimeout(t);
  },
};

/** A clock that moves only when told to, for tests. Timers fire in due order during {@link advance}. */
export class ManualClock implements Clock {
  private current: number;
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  /** The current time. */
  now(): number {
    return this.current;
  }

  /** Schedules `fn` at now + `ms`. */
  setTimer(fn: () => void, ms: number): () => void {
    const t = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(t);
    return () => {
      this.timers = this.timers.filter((x) => x !== t);
    };
  }

  /** The number of timers waiting. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due (in order), and lets the promise
   * work they start settle before returning.
   */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (next === undefined || next.at > end) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = end;
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
