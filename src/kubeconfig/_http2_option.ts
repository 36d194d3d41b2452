/**
 * The connection options the kubeconfig entry points share (`http2`,
 * `maxStreamsPerConnection`): their defaults and their validation, in one
 * place.
 *
 * @module
 */

/** The defaults of the connection options every loader takes. */
export const CONNECTION_DEFAULTS: {
  readonly http2: true;
  readonly maxStreamsPerConnection: 100;
} = {
  http2: true,
  /**
   * Requests in flight per HTTP/2 connection where the client cannot learn
   * the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (Deno's
   * `Deno.HttpClient`). 100 is what kube-apiserver advertises unless
   * `--http2-max-streams-per-connection` says otherwise, since the HTTP/2
   * "rapid reset" fix of October 2023 (kubernetes/kubernetes#121120; Go's
   * 250 before it), the smallest limit RFC 9113 recommends a server to
   * allow, and HAProxy's default (nginx: 128; aggregated API servers on
   * k8s.io/apiserver's recommended options: 1000): the lowest limit common
   * servers advertise, so it queues nothing on them. On Node the server's
   * advertised limit applies unless the option is given.
   */
  maxStreamsPerConnection: 100,
};

/** `value` (the `http2` option) or its default; a `TypeError` naming `where` when not a boolean. */
export function resolveHttp2(value: unknown, where: string): boolean {
  if (value === undefined) return CONNECTION_DEFAULTS.http2;
  if (typeof value !== "boolean") {
    throw new TypeError(`${where}: http2 must be a boolean, got ${typeof value}`);
  }
  return value;
}

/**
 * `value` (the `maxStreamsPerConnection` option), or `undefined` when not
 * given (each runtime's fetch then applies its default); a `TypeError`
 * naming `where` when not a number, a `RangeError` when not a whole number
 * >= 1.
 */
export function resolveMaxStreams(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number") {
    throw new TypeError(`${where}: maxStreamsPerConnection must be a number, got ${typeof value}`);
  }
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(
      `${where}: maxStreamsPerConnection must be a whole number >= 1, got ${value}`,
    );
  }
  return value;
}
