import type { Readable } from "node:stream";
import type { RequestAuth } from "./credentials/types.js";

/**
 * What a request is for. Each lane has connections of its own, so that one kind of traffic can never
 * take every connection another needs: a hundred long-lived watches must not keep a GET, and
 * nothing must keep the Lease renewal, waiting for a socket.
 */
export type Lane = "request" | "watch" | "lease";

/** One HTTP exchange as the API client asks for it, independent of the protocol that carries it. */
export interface RoundTrip {
  method: string;
  url: URL;
  headers: Record<string, string | number>;
  body?: string;
  lane: Lane;
  /** The exchange fails when its connection or stream stays silent this long. */
  idleTimeoutMs: number;
  signal?: AbortSignal;
}

/** The answer's head; the body is read (or destroyed) by the caller. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  /**
   * Whether the connection that carries this answer is still alive: an HTTP/2 ping answered within
   * `timeoutMs` (true), or not (false: the connection is dropped, so every stream on it fails).
   * Absent where the protocol has no way to ask (HTTP/1.1); a long-lived stream that goes quiet is
   * then only known to be alive by opening it again.
   */
  alive?(timeoutMs: number): Promise<boolean>;
}

export interface Transport {
  /** "h2", "http/1.1", or "unknown" before the first connection said which. */
  readonly protocol: string;
  roundTrip(rt: RoundTrip, auth: RequestAuth): Promise<RawResponse>;
  /** Open connections by pool (HTTP/2: main, lease; HTTP/1.1: one per lane), for the gauge and the benchmarks. */
  connections(): Record<string, number>;
  /** The streams the server lets one connection carry (HTTP/2 only; undefined before the first). */
  streamLimit(): number | undefined;
  close(): void;
}

/**
 * A failure of the connection, not an answer of the server: the exchange may be tried again on a
 * fresh connection when the method allows it.
 */
export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
  }
}

/**
 * The abort reason of a caller that gives an exchange up because it went silent (a watch without a
 * bookmark for too long): the connection is checked before it carries anything else, since every
 * stream on a dead HTTP/2 connection is silent alike, answered or not.
 */
export class SilentConnectionError extends TransportError {
  constructor(message: string) {
    super(message);
    this.name = "SilentConnectionError";
  }
}

/** An error for a caller's own abort, as fetch and node:http produce it. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const e = new Error("the operation was aborted");
  e.name = "AbortError";
  return e;
}
