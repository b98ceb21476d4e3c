import { randomBytes } from 'node:crypto';
import type { Liveness } from '@heddle/placement';
import type { AlertReason, PlacementState } from './state-store.js';

// The plane's event bus: every change an operator watches (instances, nodes, alerts, approvals) is
// published here once, after it is durable. Subscribers (the operator API's event stream, metrics)
// are told synchronously; a bounded ring keeps the latest events so that a client that reconnects
// can resume after the last event it saw (docs/operator-api.md, "Event stream").

/** An instance was placed (an original placement or a reschedule's replacement). */
export interface InstancePlacedData {
  readonly instance_id: string;
  readonly node_id: string;
  readonly order_id: string;
  /** The chain hash of the decision that placed it. */
  readonly decision_id: string;
  readonly workload: string;
  readonly version: string;
  readonly variant: string;
  readonly state: PlacementState;
  /** The instance it replaced (a reschedule), or null. */
  readonly replaces: string | null;
}

/** An instance's state changed (`stopped`, `running`, `lost`, ... as in docs/lifecycle.md). */
export interface InstanceStateData {
  readonly instance_id: string;
  readonly node_id: string;
  readonly workload: string;
  readonly from: PlacementState;
  readonly to: PlacementState;
}

/** A lost instance was placed again: `instance_id` replaces `replaces`. */
export interface InstanceRescheduledData {
  readonly instance_id: string;
  readonly replaces: string;
  readonly node_id: string;
  readonly workload: string;
  /** How many reschedules led to this instance in its lineage. */
  readonly reschedules: number;
}

/** An instance's record was removed from the controller's state. */
export interface InstanceRemovedData {
  readonly instance_id: string;
  readonly node_id: string;
}

/** The controller learned a node. */
export interface NodeJoinedData {
  readonly node_id: string;
  readonly url: string;
  readonly tier: string | null;
  /** The node's kind (`host`, `seed`). */
  readonly kind: string;
}

/** A node's liveness changed (`unknown`, `alive`, `suspect`, `dead`). */
export interface NodeLivenessData {
  readonly node_id: string;
  readonly from: Liveness;
  readonly to: Liveness;
}

/** The controller forgot a node. */
export interface NodeRemovedData {
  readonly node_id: string;
}

/** An alert was raised (opened) or acknowledged (closed). */
export interface AlertEventData {
  readonly alert_id: string;
  readonly instance_id: string;
  readonly node_id: string;
  readonly reason: AlertReason;
  readonly detail: string;
}

/** The states of an approval an event names. */
export type ApprovalEventState = 'pending' | 'approved' | 'rejected' | 'expired';

/** An approval (a deferred place waiting for an operator) changed. */
export interface ApprovalEventData {
  readonly approval_id: string;
  /** The approval's state now. */
  readonly state: ApprovalEventState;
  /** The workload of the place it holds, or null when it holds none. */
  readonly workload: string | null;
  /** The node the held place would go to, or null. */
  readonly node_id: string | null;
  /** Who decided it (approved or rejected), or null. */
  readonly by: string | null;
  /** Where its held place stands (`held`, `placed`, `refused`, `expired`, `failed`, `unsettled`), or null. */
  readonly place_status: string | null;
}

/** A declarative job's record changed (a new version, its rollout, why it is blocked, stopped). */
export interface JobEventData {
  readonly job: string;
  /** The desired version now. */
  readonly version: number;
  readonly status: 'running' | 'stopped';
  readonly rollout: 'rolling' | 'complete' | 'failed';
  /** Why the job cannot converge, or null. */
  readonly blocked: string | null;
}

/** Every event type and its data. */
export interface PlaneEventMap {
  readonly 'instance.placed': InstancePlacedData;
  readonly 'instance.state_changed': InstanceStateData;
  readonly 'instance.rescheduled': InstanceRescheduledData;
  readonly 'instance.removed': InstanceRemovedData;
  readonly 'node.joined': NodeJoinedData;
  readonly 'node.liveness_changed': NodeLivenessData;
  readonly 'node.removed': NodeRemovedData;
  readonly 'alert.opened': AlertEventData;
  readonly 'alert.closed': AlertEventData;
  readonly 'approval.pending': ApprovalEventData;
  readonly 'approval.approved': ApprovalEventData;
  readonly 'approval.rejected': ApprovalEventData;
  readonly 'approval.expired': ApprovalEventData;
  readonly 'approval.updated': ApprovalEventData;
  readonly 'job.updated': JobEventData;
}

/** An event type's name. */
export type PlaneEventType = keyof PlaneEventMap;

/** Every event type, in documentation order. */
export const PLANE_EVENT_TYPES: readonly PlaneEventType[] = Object.freeze([
  'instance.placed',
  'instance.state_changed',
  'instance.rescheduled',
  'instance.removed',
  'node.joined',
  'node.liveness_changed',
  'node.removed',
  'alert.opened',
  'alert.closed',
  'approval.pending',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'approval.updated',
  'job.updated',
] as const);

/** One published event. */
export type PlaneEvent = {
  readonly [K in PlaneEventType]: {
    /** `<epoch>-<seq>`: the bus's epoch (16 hex, new per process) and a sequence from 1. */
    readonly id: string;
    readonly type: K;
    /** When it was published (Unix ms). */
    readonly at_ms: number;
    readonly data: PlaneEventMap[K];
  };
}[PlaneEventType];

/** What {@link PlaneEvents.since} answers. */
export interface EventsSince {
  /** The events after the given id, oldest first. */
  readonly events: readonly PlaneEvent[];
  /**
   * False when events may have been missed: the id is of another epoch (the controller restarted),
   * malformed, or older than the ring holds. The client must then reload the state it shows.
   */
  readonly complete: boolean;
}

/** Options of {@link PlaneEvents}. */
export interface PlaneEventsOptions {
  /** How many events the ring keeps for resuming (default 1024). */
  readonly ringSize?: number;
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
  /** The epoch (default 16 random hex). */
  readonly epoch?: string;
}

/** A subscriber: told of every event, in order. Its exceptions are ignored. */
export type PlaneEventListener = (event: PlaneEvent) => void;

/**
 * The plane's typed event bus with a bounded ring for resume. Publishing never throws: a listener
 * that throws is ignored (it must not break the change that was already made).
 */
export class PlaneEvents {
  /** This bus's epoch: event ids of another epoch cannot be resumed from. */
  readonly epoch: string;
  readonly #ring: PlaneEvent[] = [];
  readonly #ringSize: number;
  readonly #now: () => number;
  readonly #listeners = new Set<PlaneEventListener>();
  #seq = 0;

  constructor(options: PlaneEventsOptions = {}) {
    this.#ringSize = Math.max(1, options.ringSize ?? 1024);
    this.#now = options.now ?? Date.now;
    this.epoch = options.epoch ?? randomBytes(8).toString('hex');
  }

  /** Publishes an event; returns it. */
  publish<K extends PlaneEventType>(type: K, data: PlaneEventMap[K]): PlaneEvent {
    this.#seq += 1;
    // cast: `{ type: K, data: PlaneEventMap[K] }` is the member of the PlaneEvent union for K.
    const event = { id: `${this.epoch}-${this.#seq}`, type, at_ms: this.#now(), data } as PlaneEvent;
    this.#ring.push(event);
    if (this.#ring.length > this.#ringSize) this.#ring.shift();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure is its own.
      }
    }
    return event;
  }

  /** Subscribes `listener`; returns the function that unsubscribes it. */
  subscribe(listener: PlaneEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** How many subscribers there are. */
  get subscribers(): number {
    return this.#listeners.size;
  }

  /** The id of the last event published, or null before any. */
  get lastId(): string | null {
    return this.#seq === 0 ? null : `${this.epoch}-${this.#seq}`;
  }

  /** The events kept in the ring, oldest first. */
  recent(): readonly PlaneEvent[] {
    return [...this.#ring];
  }

  /**
   * The events published after `lastId` (see {@link EventsSince}); `<epoch>-0` names the point before
   * the first event.
   */
  since(lastId: string): EventsSince {
    const m = /^([0-9a-f]{1,64})-(0|[1-9][0-9]{0,15})$/.exec(lastId);
    if (m === null || m[1] !== this.epoch) return { events: [...this.#ring], complete: false };
    const seq = Number(m[2]);
    if (seq > this.#seq) return { events: [...this.#ring], complete: false };
    const first = this.#seq - this.#ring.length + 1;
    const events = this.#ring.slice(Math.max(0, seq + 1 - first));
    return { events, complete: seq + 1 >= first };
  }
}
