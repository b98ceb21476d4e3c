import type { DepartedInstance } from '@heddle/protocol';

/** How many departed instances a host remembers. */
export const DEPARTED_CAPACITY = 256;

/**
 * The last {@link DEPARTED_CAPACITY} instances taken down on purpose (unloaded, revoked) or lost with a
 * restart of the host (found in its instances file but not adopted again), newest last.
 * A controller reads it to tell a teardown from an instance lost with a restart: the list lives in
 * memory, so a restart empties it, then notes as `lost` what the restart could not adopt again.
 * Placing an instance again under the same id removes it from the list.
 */
export class DepartedLog {
  readonly #entries: DepartedInstance[] = [];
  readonly #capacity: number;

  constructor(capacity: number = DEPARTED_CAPACITY) {
    this.#capacity = capacity;
  }

  /** Remembers a departure (dropping the oldest beyond the capacity). */
  note(entry: DepartedInstance): void {
    this.forget(entry.instance_id);
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) this.#entries.splice(0, this.#entries.length - this.#capacity);
  }

  /** Forgets `instanceId` (it was placed again). */
  forget(instanceId: string): void {
    const i = this.#entries.findIndex((e) => e.instance_id === instanceId);
    if (i >= 0) this.#entries.splice(i, 1);
  }

  /** The departure of `instanceId`, if remembered. */
  find(instanceId: string): DepartedInstance | undefined {
    return this.#entries.find((e) => e.instance_id === instanceId);
  }

  /** Every remembered departure, oldest first. */
  list(): DepartedInstance[] {
    return [...this.#entries];
  }
}
