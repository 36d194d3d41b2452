/**
 * The runtime's own refusal (Deno's permissions), told apart from faults.
 *
 * @module
 */

/** What the runtime refused. */
export type DeniedPermission = "net" | "read" | "write" | "env" | "run";

/**
 * The runtime refused an operation for lack of a permission (Deno's
 * `NotCapable`/`PermissionDenied`), as opposed to a fault of the network or
 * the server: retrying cannot help until the program is started with the
 * flag this error names (`flag`, e.g. `--allow-net=127.0.0.1:6443`). A
 * reflector reports it and retries only at its backoff's pace (as for a
 * server's error answer), never as fast as after a dropped connection.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, PermissionDeniedError } from "../../mod.ts";
 *
 * // what Deno's fetch throws without --allow-net
 * const denied = Object.assign(new Error('Requires net access to "127.0.0.1:6443"'), { name: "NotCapable" });
 * const client = new KubeClient({ server: "http://127.0.0.1:6443", fetch: () => Promise.reject(denied) });
 * const err = await client.requestJson("/version").catch((e) => e);
 * assert.ok(err instanceof PermissionDeniedError);
 * assert.equal(err.flag, "--allow-net=127.0.0.1:6443");
 * ```
 */
export class PermissionDeniedError extends Error {
  /** The permission the runtime refused. */
  readonly permission: DeniedPermission;
  /** What it was refused for: a `host:port`, a path, a variable's name. */
  readonly target: string;
  /** The flag that grants it, e.g. `--allow-net=127.0.0.1:6443`. */
  readonly flag: string;

  /**
   * Creates the error; its message names the flag that grants the permission.
   *
   * @param what Where it happened, e.g. `"GET /version"`.
   * @param permission The permission refused.
   * @param target What it was refused for (`host:port`, path, variable).
   * @param cause The runtime's error.
   */
  constructor(what: string, permission: DeniedPermission, target: string, cause?: unknown) {
    const flag = `--allow-${permission}=${target}`;
    super(
      `${what}: the runtime denied ${permission} access to ${target}; run Deno with ${flag} (or a broader --allow-${permission})`,
      { cause },
    );
    this.name = "PermissionDeniedError";
    this.permission = permission;
    this.target = target;
    this.flag = flag;
  }
}

/** Whether `err` is a runtime's permission refusal (Deno's `NotCapable`, or `PermissionDenied` before Deno 2). */
export function isPermissionRefusal(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === "NotCapable" || name === "PermissionDenied";
}
