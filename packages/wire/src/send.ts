import type { WebSocket } from 'ws';
import { WireError } from './errors.js';
import { SEND_HIGH_WATER_BYTES } from './limits.js';

/**
 * Sends `data` on `ws` with backpressure: while more than {@link SEND_HIGH_WATER_BYTES} are queued on
 * the socket (`bufferedAmount`), it waits (polling every few ms) before queueing more, and resolves
 * once the frame is handed to the socket. Rejects with `WireError` `closed` when the socket is not open.
 */
export async function sendWithBackpressure(ws: WebSocket, data: Buffer | string): Promise<void> {
  let wait = 1;
  while (ws.readyState === ws.OPEN && ws.bufferedAmount > SEND_HIGH_WATER_BYTES) {
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, 50);
  }
  if (ws.readyState !== ws.OPEN) throw new WireError('closed', 'the connection is not open');
  await new Promise<void>((resolve, reject) => {
    ws.send(data, (err) => (err ? reject(new WireError('closed', err.message, { cause: err })) : resolve()));
  });
}

/** Sends a JSON text frame without waiting; failures (a closing socket) are ignored. */
export function sendJson(ws: WebSocket, frame: object): void {
  if (ws.readyState !== ws.OPEN) return;
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // The socket is closing; the peer sees the close.
  }
}
