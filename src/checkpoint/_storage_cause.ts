/**
 * Internals of checkpoints: a storage's error as a short, safe text for a
 * `CheckpointError`'s message.
 *
 * @module
 */
import { sanitize } from "../api/_network_cause.ts";
import { CheckpointError } from "./checkpoint_error.ts";

/**
 * What a storage's error says, without secrets: its message (Node's system
 * errors say code, call and path: `ENOTDIR: not a directory, open
 * '/var/ckpt/pods.checkpoint'`; Deno's `NotCapable` names the flag), led by
 * its name when that says more than `Error`, and its `code` when the
 * message does not hold it. A URL's credentials, query and fragment,
 * bearer tokens and `token=`-like pairs are removed, and the text is
 * capped (see `sanitize`).
 */
export function describeStorageCause(err: unknown): string {
  if (err === null || err === undefined) return String(err);
  if (typeof err !== "object") return sanitize(String(err)) || typeof err;
  const { name, message, code } = err as { name?: unknown; message?: unknown; code?: unknown };
  let text = typeof message === "string" ? message : "";
  if (typeof code === "string" && /^[A-Za-z][A-Za-z0-9_]{1,63}$/.test(code)) {
    if (!text.includes(code)) text = text ? `${code}: ${text}` : code;
  }
  if (typeof name === "string" && name !== "" && name !== "Error" && !text.startsWith(name)) {
    text = text ? `${name}: ${text}` : name;
  }
  return sanitize(text) || "an error without a message";
}

/**
 * What a checkpoint call that failed rejects with: `signal.reason` once
 * aborted, a {@linkcode CheckpointError} as it is, anything else (the
 * storage's own error) as a `"storage"` `CheckpointError` that says what
 * the storage failed `to` do, with the error as its `cause`.
 */
export function storageFailure(
  err: unknown,
  key: string,
  signal: AbortSignal | undefined,
  to: "read" | "save" | "delete",
): unknown {
  if (signal?.aborted) return signal.reason;
  if (err instanceof CheckpointError) return err;
  return new CheckpointError(
    "storage",
    key,
    `the storage failed to ${to} it: ${describeStorageCause(err)}`,
    { cause: err },
  );
}
