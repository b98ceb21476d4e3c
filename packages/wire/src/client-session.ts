import type { Socket } from 'node:net';
import { errorMessage, type JsonValue } from '@heddle/envelope';
import {
  CallFailure,
  type CtlMethod,
  type CtlResponse,
  isCtlMethod,
  lostCallKind,
  ResponseError,
  refusalKind,
  type SignedCtl,
  verifyResponse,
} from '@heddle/protocol';
import { type RawData, WebSocket } from 'ws';
import { BinaryKind, encodeBinaryFrame, rawToBuffer } from './binary-frame.js';
import { CloseCode } from './close-codes.js';
import {
  type FetchManifestFrame,
  type FetchMapFrame,
  type FetchPieceFrame,
  parseFrame,
  SERVER_FRAME_TYPES,
  ServerFrameSchema,
} from './frames.js';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_HANDSHAKE_TIMEOUT_MS, MAX_TEXT_FRAME_BYTES } from './limits.js';
import type { PackageSource } from './package-source.js';
import { sendJson, sendWithBackpressure } from './send.js';

/** Connection options of a client. */
export interface WireClientOptions {
  /** Trusted CA certificates (PEM) for `wss://`, e.g. the host's self-signed certificate. */
  readonly ca?: string | Buffer;
  /** Verify the server's certificate (default true). */
  readonly rejectUnauthorized?: boolean;
  /** Time allowed to connect and upgrade (default 10 s). */
  readonly connectTimeoutMs?: number;
}

/** Options of one call. */
export interface CallOptions {
  /** The transport method (default: the signed request's method). */
  readonly method?: string;
  /** Time to wait for the answer, piece exchange included (default 60 s). */
  readonly timeoutMs?: number;
  /** The package the host may fetch during this call (place, load); nothing can be fetched without it. */
  readonly source?: PackageSource;
  /** The host's key, when known: a response signed by another key is not accepted. */
  readonly expectedPublicKey?: Uint8Array;
  /** The clock (Unix ms) used to refuse a response that arrives after the request expired (default `Date.now`). */
  readonly now?: () => number;
}

/** A call answered with an `ok` outcome. */
export interface CallResult {
  /** The signed response as received. */
  readonly signed: SignedCtl;
  /** The verified response. */
  readonly response: CtlResponse;
  /** The host's public key. */
  readonly publicKey: Uint8Array;
  /** The method's result. */
  readonly result: JsonValue;
}

interface OpenCall {
  readonly method: string;
  readonly source: PackageSource | undefined;
  readonly settle: (signed: SignedCtl | undefined, failure?: CallFailure) => void;
}

interface RequestFields {
  readonly method: CtlMethod;
  readonly nonce: string;
  readonly expires_at_ms: number;
}

function requestFields(signed: SignedCtl): RequestFields | undefined {
  try {
    // cast: only optional fields of unknown type are read, each checked before use
    const r = JSON.parse(signed.payload) as { method?: unknown; nonce?: unknown; expires_at_ms?: unknown };
    if (!isCtlMethod(r.method) || typeof r.nonce !== 'string' || typeof r.expires_at_ms !== 'number') {
      return undefined;
    }
    return { method: r.method, nonce: r.nonce, expires_at_ms: r.expires_at_ms };
  } catch {
    return undefined;
  }
}

/**
 * One client connection to a host, carrying any number of calls (correlated by id) and answering the
 * host's fetch requests for each call's {@link PackageSource}. Every failure is a `CallFailure`
 * classed as docs/protocol.md section 11 says: connect failed or not sent: `unreachable`; a mutating call sent and no
 * valid answer: `indeterminate`; a signed refusal: `refused` (see `refusalKind`).
 */
export class WireSession {
  readonly #ws: WebSocket;
  readonly #socket: Socket | undefined;
  readonly #calls = new Map<number, OpenCall>();
  #nextId = 1;
  #closed = false;

  private constructor(ws: WebSocket, socket: Socket | undefined) {
    this.#ws = ws;
    this.#socket = socket;
    ws.on('message', (data: RawData, isBinary: boolean) => this.#onMessage(data, isBinary));
    ws.on('error', () => {});
    ws.on('close', (code: number) => this.#onClose(code));
  }

  /** Connects to `url`; rejects with a `CallFailure` `unreachable` when the connection cannot be made. */
  static connect(url: string, options: WireClientOptions = {}): Promise<WireSession> {
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(url, {
          maxPayload: MAX_TEXT_FRAME_BYTES,
          perMessageDeflate: false,
          handshakeTimeout: options.connectTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
          ...(options.ca === undefined ? {} : { ca: options.ca }),
          ...(options.rejectUnauthorized === undefined
            ? {}
            : { rejectUnauthorized: options.rejectUnauthorized }),
        });
      } catch (err) {
        reject(
          new CallFailure('unreachable', `cannot connect to ${url}: ${errorMessage(err)}`, {
            cause: err,
          }),
        );
        return;
      }
      const fail = (why: string, cause?: unknown): void => {
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(new CallFailure('unreachable', `cannot connect to ${url}: ${why}`, { cause }));
      };
      let socket: Socket | undefined;
      ws.once('upgrade', (res) => {
        socket = res.socket;
      });
      ws.once('error', (err) => fail(err.message, err));
      ws.once('close', (code) => fail(`closed with ${code} during the handshake`));
      ws.once('open', () => {
        ws.removeAllListeners();
        resolve(new WireSession(ws, socket));
      });
    });
  }

  /**
   * Lets the process exit while this connection is open and idle (a kept session); an open call's
   * timer still keeps it running until the call ends.
   */
  unref(): void {
    this.#socket?.unref();
  }

  /** True while the connection is open. */
  get isOpen(): boolean {
    return !this.#closed && this.#ws.readyState === WebSocket.OPEN;
  }

  /**
   * Sends a signed request and returns the verified `ok` answer. Throws `CallFailure`: `refused` with
   * the host's refusal; `unreachable` when the request was not sent (or cannot have changed state);
   * `indeterminate` when a mutating request was sent and no valid answer came back (timeout, closed
   * connection, error frame, a response failing `verifyResponse`).
   */
  call(signed: SignedCtl, options: CallOptions = {}): Promise<CallResult> {
    const request = requestFields(signed);
    if (request === undefined) {
      return Promise.reject(new CallFailure('unreachable', 'the signed request cannot be read; not sent'));
    }
    if (!this.isOpen)
      return Promise.reject(new CallFailure('unreachable', 'the connection is closed; not sent'));
    const method = options.method ?? request.method;
    const id = this.#nextId++;
    return new Promise<CallResult>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      const timer = setTimeout(() => {
        settle(
          undefined,
          new CallFailure(lostCallKind(request.method, true), `no answer in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      const settle = (answer: SignedCtl | undefined, failure?: CallFailure): void => {
        if (!this.#calls.delete(id)) return;
        clearTimeout(timer);
        if (failure !== undefined || answer === undefined) {
          reject(failure ?? new CallFailure(lostCallKind(request.method, true), 'no answer'));
          return;
        }
        try {
          resolve(this.#accept(answer, request, options));
        } catch (err) {
          reject(err);
        }
      };
      this.#calls.set(id, { method: request.method, source: options.source, settle });
      sendJson(this.#ws, { t: 'call', id, method, signed });
    });
  }

  #accept(answer: SignedCtl, request: RequestFields, options: CallOptions): CallResult {
    let verified: ReturnType<typeof verifyResponse>;
    try {
      verified = verifyResponse(answer, {
        request,
        ...(options.expectedPublicKey === undefined ? {} : { expectedPublicKey: options.expectedPublicKey }),
        now: (options.now ?? Date.now)(),
      });
    } catch (err) {
      const why = err instanceof ResponseError ? err.message : String(err);
      throw new CallFailure(lostCallKind(request.method, true), `invalid response: ${why}`, { cause: err });
    }
    const outcome = verified.response.outcome;
    if (outcome.status === 'ok') {
      return {
        signed: answer,
        response: verified.response,
        publicKey: verified.publicKey,
        result: outcome.result,
      };
    }
    if (refusalKind(request.method, outcome) === 'refused') throw CallFailure.refused(outcome);
    throw new CallFailure(
      'indeterminate',
      `unauthenticated refusal of a mutating call: ${outcome.code}: ${outcome.reason}`,
      {
        refusal: outcome,
      },
    );
  }

  /** Closes the connection (code 1000); open calls fail as lost. */
  close(): Promise<void> {
    if (this.#ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#ws.terminate();
        resolve();
      }, 1000);
      t.unref();
      this.#ws.once('close', () => {
        clearTimeout(t);
        resolve();
      });
      this.#ws.close(CloseCode.normal, 'done');
    });
  }

  #failAll(unreachable: boolean, why: string): void {
    for (const call of [...this.#calls.values()]) {
      const kind = unreachable ? 'unreachable' : lostCallKind(call.method, true);
      call.settle(undefined, new CallFailure(kind, why));
    }
  }

  #onClose(code: number): void {
    this.#closed = true;
    const capped = code === CloseCode.tryAgainLater;
    this.#failAll(
      capped,
      capped ? 'the host is at its session cap (1013); not processed' : `connection closed (${code})`,
    );
  }

  #protocolError(reason: string): void {
    sendJson(this.#ws, { t: 'error', code: 'malformed_frame', reason });
    this.#failAll(false, `the host broke the protocol: ${reason}`);
    this.#ws.close(CloseCode.protocol, 'malformed_frame');
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.#protocolError('unexpected binary frame');
      return;
    }
    const text = rawToBuffer(data).toString('utf8');
    const parsed = parseFrame(text, ServerFrameSchema, SERVER_FRAME_TYPES);
    if (!parsed.ok) {
      this.#protocolError(parsed.reason);
      return;
    }
    const frame = parsed.frame;
    switch (frame.t) {
      case 'result':
        this.#calls.get(frame.id)?.settle(frame.signed);
        return;
      case 'error': {
        const why = `host error ${frame.code}: ${frame.reason}`;
        if (frame.code === 'session_limit') {
          this.#failAll(true, why);
          return;
        }
        const call = frame.id === undefined ? undefined : this.#calls.get(frame.id);
        if (call !== undefined) call.settle(undefined, new CallFailure(lostCallKind(call.method, true), why));
        else this.#failAll(false, why);
        return;
      }
      default:
        void this.#serveFetch(frame);
    }
  }

  async #serveFetch(frame: FetchManifestFrame | FetchMapFrame | FetchPieceFrame): Promise<void> {
    const refuse = (code: string, reason: string): void =>
      sendJson(this.#ws, { t: 'fetch_refused', id: frame.id, code, reason: reason.slice(0, 4096) });
    const source = this.#calls.get(frame.call_id)?.source;
    if (source === undefined) return refuse('not_offered', `call ${frame.call_id} offers no package`);
    try {
      if (frame.t === 'fetch_manifest') {
        if (frame.manifest_hash !== source.manifestHash) {
          return refuse('not_offered', `call ${frame.call_id} offers only ${source.manifestHash}`);
        }
        await sendWithBackpressure(
          this.#ws,
          encodeBinaryFrame(BinaryKind.manifest, frame.id, await source.manifest()),
        );
      } else if (frame.t === 'fetch_map') {
        sendJson(this.#ws, { t: 'piece_map', id: frame.id, map: await source.pieceMap(frame.path) });
      } else {
        const bytes = await source.piece(frame.path, frame.index);
        await sendWithBackpressure(this.#ws, encodeBinaryFrame(BinaryKind.piece, frame.id, bytes));
      }
    } catch (err) {
      refuse('unavailable', err instanceof Error ? err.message : String(err));
    }
  }
}
