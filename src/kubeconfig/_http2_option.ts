/**
 * The `http2` option the kubeconfig entry points share: its default and
 * its validation, in one place.
 *
 * @module
 */

/** The defaults of the connection options every loader takes. */
export const CONNECTION_DEFAULTS: { readonly http2: true } = { http2: true };

/** `value` (the `http2` option) or its default; a `TypeError` naming `where` when not a boolean. */
export function resolveHttp2(value: unknown, where: string): boolean {
  if (value === undefined) return CONNECTION_DEFAULTS.http2;
  if (typeof value !== "boolean") {
    throw new TypeError(`${where}: http2 must be a boolean, got ${typeof value}`);
  }
  return value;
}
