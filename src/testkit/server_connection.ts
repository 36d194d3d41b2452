/**
 * What the fake API server reports about each connection it accepted.
 *
 * @module
 */

/**
 * One connection the fake API server accepted (see
 * `FakeApiServer.connections`): a snapshot, taken when read.
 */
export interface ServerConnection {
  /** 1, 2, 3... in the order the connections were accepted. */
  readonly id: number;
  /**
   * The protocol it speaks: `"h2"` when TLS's ALPN chose it (a server
   * started with `tls` and `http2`), else `"http/1.1"` (plain HTTP too).
   */
  readonly protocol: "h2" | "http/1.1";
  /** False once the connection closed (by either side). */
  readonly open: boolean;
  /** Requests received on it so far (on h2: streams). */
  readonly requests: number;
  /** Requests being answered on it now (open watches included; on h2: open streams). */
  readonly streams: number;
}
