import type { SignedCtl } from '@heddle/protocol';
import { type CallOptions, type CallResult, type WireClientOptions, WireSession } from './client-session.js';

/**
 * The controller side of the transport, one connection per call: `call` connects, sends the signed
 * request, serves the call's package to the host if it asks, returns the verified answer and closes.
 * A connection per call keeps calls isolated (a host closing a session after a refusal, or a peer
 * dropping one, affects one call) and makes the Unreachable / Indeterminate line exact: a failed
 * connect is always `unreachable`. Use {@link WireSession} directly to carry many calls on one
 * connection.
 */
export class WireClient {
  readonly #options: WireClientOptions;

  constructor(options: WireClientOptions = {}) {
    this.#options = options;
  }

  /**
   * Calls the host at `url` (`ws://` or `wss://`) with a signed request. Resolves with the verified `ok`
   * answer; throws `CallFailure` (`refused`, `unreachable`, `indeterminate`) otherwise.
   */
  async call(url: string, signed: SignedCtl, options: CallOptions = {}): Promise<CallResult> {
    const session = await WireSession.connect(url, this.#options);
    try {
      return await session.call(signed, options);
    } finally {
      await session.close();
    }
  }
}
