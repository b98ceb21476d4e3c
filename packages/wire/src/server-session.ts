import type { SignedCtl } from '@heddle/protocol';
import type { RawData, WebSocket } from 'ws';
import { BinaryKind, decodeBinaryFrame, rawToBuffer } from './binary-frame.js';
import { CloseCode } from './close-codes.js';
import { WireError } from './errors.js';
import { type FetchChannel, type FetchOptions, fetchPackage } from './fetch-package.js';
import { type CallFrame, CLIENT_FRAME_TYPES, ClientFrameSchema, parseFrame } from './frames.js';
import { sendJson } from './send.js';

/** What a server's handler gets with each call. */
export interface CallContext {
  /** The call's id within its session (chosen by the client). */
  readonly callId: number;
  /** The transport method of the call frame: pass it to `verifyRequest` as `expectedMethod`. */
  readonly method: string;
  /** The peer's address, as the socket reports it. */
  readonly remoteAddress: string | undefined;
  /** Aborted when the connection closes before the call is answered. */
  readonly signal: AbortSignal;
  /**
   * Fetches the package with `manifestHash` from the controller over this call's connection into
   * `destDir` and returns its absolute path (see `fetchPackage`). Only the package the controller
   * registered for this call can be fetched; verify the result with `verifyPackage` before use.
   */
  fetchPackage(manifestHash: string, destDir: string, options?: FetchOptions): Promise<string>;
  /**
   * Closes the connection (code 1008) once the response is sent: for the one signed refusal of an
   * unauthenticated request. Ignored on a session that already carried a verified call.
   */
  closeAfterReply(): void;
  /**
   * Tells the server that this call's request passed verification: the connection is authenticated
   * from now on and no longer counted among the unauthenticated ones (docs/protocol.md 13.3).
   */
  authenticated(): void;
}

/** A server's call handler: returns the host's signed response (a signed refusal included). */
export type CallHandler = (signed: SignedCtl, ctx: CallContext) => Promise<SignedCtl>;

/** Settings a session runs with (resolved server options). */
export interface SessionSettings {
  readonly handler: CallHandler;
  readonly maxCallsPerSession: number;
  readonly idleTimeoutMs: number;
  readonly onError: (err: unknown) => void;
  /** Called once, when a call of the session passed verification. */
  readonly onAuthenticated?: () => void;
}

interface Pending {
  readonly kind: 'manifest' | 'map' | 'piece';
  readonly callId: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/** One accepted WebSocket connection on the server side: frame handling, calls and fetch requests. */
export class ServerSession {
  /** False after a ping until the pong arrives (liveness). */
  alive = true;
  readonly #ws: WebSocket;
  readonly #remote: string | undefined;
  readonly #settings: SessionSettings;
  readonly #calls = new Map<number, AbortController>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #idle: NodeJS.Timeout | undefined;
  #closed = false;
  #authenticated = false;

  constructor(ws: WebSocket, remote: string | undefined, settings: SessionSettings, onClosed: () => void) {
    this.#ws = ws;
    this.#remote = remote;
    this.#settings = settings;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.#onMessage(data, isBinary);
      } catch (err) {
        settings.onError(err);
        this.#fail('internal', 'internal error', CloseCode.internal);
      }
    });
    ws.on('pong', () => {
      this.alive = true;
    });
    ws.on('close', () => {
      this.#shutdown();
      onClosed();
    });
    this.#armIdle();
  }

  /** Pings the peer, or terminates it when the previous ping went unanswered. */
  ping(): void {
    if (!this.alive) {
      this.#ws.terminate();
      return;
    }
    this.alive = false;
    try {
      this.#ws.ping();
    } catch {
      this.#ws.terminate();
    }
  }

  /** Closes the session with `code`. */
  close(code: number, reason: string): void {
    this.#ws.close(code, reason);
  }

  #armIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#calls.size === 0) this.#ws.close(CloseCode.idle, 'idle');
      else this.#armIdle();
    }, this.#settings.idleTimeoutMs);
    this.#idle.unref();
  }

  #fail(code: string, reason: string, closeCode: number, id?: number): void {
    sendJson(this.#ws, id === undefined ? { t: 'error', code, reason } : { t: 'error', id, code, reason });
    this.#ws.close(closeCode, code);
    this.#shutdown();
  }

  #shutdown(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#idle);
    for (const ac of this.#calls.values()) ac.abort();
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(new WireError('closed', 'the connection closed during the fetch'));
    }
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#closed) return;
    this.#armIdle();
    const buf = rawToBuffer(data);
    if (isBinary) {
      this.#onBinary(buf);
      return;
    }
    const parsed = parseFrame(buf.toString('utf8'), ClientFrameSchema, CLIENT_FRAME_TYPES);
    if (!parsed.ok) {
      const close = parsed.code === 'frame_too_large' ? CloseCode.tooBig : CloseCode.protocol;
      this.#fail(parsed.code, parsed.reason, close);
      return;
    }
    const frame = parsed.frame;
    switch (frame.t) {
      case 'call':
        this.#onCall(frame);
        return;
      case 'piece_map':
        this.#answer(frame.id, 'map', frame.map);
        return;
      case 'fetch_refused': {
        const p = this.#take(frame.id, undefined);
        p?.reject(new WireError('fetch_refused', `${frame.code}: ${frame.reason}`));
        return;
      }
      case 'error':
        this.#ws.close(CloseCode.normal, 'peer error');
        this.#shutdown();
        return;
    }
  }

  #onBinary(buf: Buffer): void {
    const decoded = decodeBinaryFrame(buf);
    if (typeof decoded === 'string') {
      this.#fail('unexpected_binary', decoded, CloseCode.protocol);
      return;
    }
    this.#answer(decoded.id, decoded.kind === BinaryKind.piece ? 'piece' : 'manifest', decoded.data);
  }

  /** Resolves fetch request `id`; an answer to a request that timed out is dropped, one never asked for is a protocol error. */
  #answer(id: number, kind: Pending['kind'], value: unknown): void {
    const p = this.#take(id, kind);
    if (p !== undefined) p.resolve(value);
  }

  #take(id: number, kind: Pending['kind'] | undefined): Pending | undefined {
    const p = this.#pending.get(id);
    if (p === undefined || (kind !== undefined && p.kind !== kind)) {
      if (p === undefined && id > 0 && id < this.#nextId) return undefined; // late answer after a timeout
      this.#fail('unexpected_answer', `no ${kind ?? 'fetch'} request ${id} is open`, CloseCode.protocol);
      return undefined;
    }
    clearTimeout(p.timer);
    this.#pending.delete(id);
    return p;
  }

  #onCall(frame: CallFrame): void {
    if (this.#calls.has(frame.id)) {
      this.#fail('duplicate_id', `call ${frame.id} is already open`, CloseCode.protocol, frame.id);
      return;
    }
    if (this.#calls.size >= this.#settings.maxCallsPerSession) {
      const reason = `more than ${this.#settings.maxCallsPerSession} calls open at once`;
      this.#fail('too_many_calls', reason, CloseCode.tooManyCalls, frame.id);
      return;
    }
    const ac = new AbortController();
    this.#calls.set(frame.id, ac);
    let closeAfter = false;
    const ctx: CallContext = {
      callId: frame.id,
      method: frame.method,
      remoteAddress: this.#remote,
      signal: ac.signal,
      fetchPackage: (hash, dest, options) => fetchPackage(this.#channel(frame.id), hash, dest, options),
      closeAfterReply: () => {
        // Only a connection that has made no verified call is closed (docs/protocol.md 13.1): an
        // authenticated session carries the controller's other calls, which a close would lose.
        if (!this.#authenticated) closeAfter = true;
      },
      authenticated: () => {
        if (this.#authenticated) return;
        this.#authenticated = true;
        this.#settings.onAuthenticated?.();
      },
    };
    void this.#run(frame, ctx).then((signed) => {
      this.#calls.delete(frame.id);
      this.#dropPending(frame.id);
      if (this.#closed) return;
      if (signed === undefined) {
        this.#fail('internal', 'the host failed to answer this call', CloseCode.internal, frame.id);
        return;
      }
      sendJson(this.#ws, { t: 'result', id: frame.id, signed });
      if (closeAfter) {
        this.#ws.close(CloseCode.policy, 'refused');
        this.#shutdown();
      } else this.#armIdle();
    });
  }

  async #run(frame: CallFrame, ctx: CallContext): Promise<SignedCtl | undefined> {
    try {
      return await this.#settings.handler(frame.signed, ctx);
    } catch (err) {
      this.#settings.onError(err);
      return undefined;
    }
  }

  #dropPending(callId: number): void {
    for (const [id, p] of this.#pending) {
      if (p.callId !== callId) continue;
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(new WireError('closed', 'the call ended during the fetch'));
    }
  }

  #request<T>(callId: number, kind: Pending['kind'], frame: object, timeoutMs: number): Promise<T> {
    if (this.#closed || !this.#calls.has(callId)) {
      return Promise.reject(new WireError('closed', 'the call is not open'));
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new WireError('timeout', `no answer to ${kind} request ${id} in ${timeoutMs} ms`));
      }, timeoutMs);
      // cast: the pending map holds requests of every answer type; each is resolved with its own kind's parsed answer
      this.#pending.set(id, { kind, callId, resolve: resolve as (v: unknown) => void, reject, timer });
      sendJson(this.#ws, { ...frame, id, call_id: callId });
    });
  }

  #channel(callId: number): FetchChannel {
    return {
      manifest: (manifestHash, timeoutMs) =>
        this.#request<Uint8Array>(
          callId,
          'manifest',
          { t: 'fetch_manifest', manifest_hash: manifestHash },
          timeoutMs,
        ),
      pieceMap: (path, timeoutMs) =>
        this.#request<unknown>(callId, 'map', { t: 'fetch_map', path }, timeoutMs),
      piece: (path, index, timeoutMs) =>
        this.#request<Uint8Array>(callId, 'piece', { t: 'fetch_piece', path, index }, timeoutMs),
    };
  }
}
