// The `@heddle/control-plane/contract` entry: what an operator client needs of the control plane at
// run time (the order schema, the idempotency key pattern, the placement states, the error classes),
// without the plane itself. A client that imports only this entry (the operator API client, `heddle
// place`) does not load the placement engine, the wire, the gate or the WebSocket library.

export { PlaneError, StateError } from './errors.js';
export { IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';
export { type PlaceOrderInput, PlaceOrderInputSchema } from './order.js';
export { PLACEMENT_STATES } from './state-store.js';
