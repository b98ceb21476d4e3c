import { type OperatorCommandDef, operatorDef } from '../command-def.js';

// The definition of `heddle events`: what it parses and what its help and the CLI reference say.

/** `heddle events`. */
export const EVENTS: OperatorCommandDef = operatorDef({
  name: 'events',
  summary: 'follow the controller’s event stream (instances, nodes, alerts, approvals)',
  description:
    'Follows GET /v1/events (docs/operator-api.md, "Event stream") and prints one line per event: the time, the event type and what it is about (instance.placed, instance.state_changed, instance.rescheduled, instance.removed, node.joined, node.liveness_changed, node.removed, alert.opened, alert.closed, approval.pending/approved/rejected/expired). When the connection drops it reconnects with the last event id and gets what it missed; when the controller cannot continue from that id (it restarted, or the id is too old) it prints a `stream.reset` line: what happened in between is not replayed.\n\nIt runs until interrupted (Ctrl-C), or until --count events were printed. --since <id> starts after that event id (from the id of an earlier line of --json).',
  positionals: [],
  flags: [
    {
      name: 'count',
      kind: 'string',
      value: '<n>',
      description:
        'exit after printing n events (1..1000000; stream.open and stream.reset lines not counted)',
    },
    { name: 'since', kind: 'string', value: '<id>', description: 'resume after this event id' },
  ],
  json: 'one line per event: {"id","type","at_ms","data"} as the stream sends it (stream.open and stream.reset: {"id","type","data"})',
  exits: {
    0: 'interrupted, or --count events printed',
    1: 'the controller is not running',
    2: 'usage error',
    3: 'bad input: unauthorized, invalid_input (--count)',
    4: 'internal error',
  },
});
