import type { TokenProvider } from "../transport/kube_client.ts";
import { isAbsolutePath, processEnv, resolvePath } from "./_runtime.ts";
import type { ExecEntry } from "./_schema.ts";
import { KubeConfigError } from "./kube_config_error.ts";

/**
 * Where an exec plugin's stderr goes: `"inherit"` (this process's stderr,
 * as kubectl does), `"ignore"` (dropped), or a function receiving it as
 * text, chunk by chunk (to route it to a logger; an exception it throws is
 * ignored).
 */
export type ExecStderr = "inherit" | "ignore" | ((text: string) => void);

/**
 * Options of {@linkcode execCredentialProvider}.
 */
export interface ExecCredentialProviderOptions {
  /** The kubeconfig file holding the `exec` entry (relative commands resolve against its folder). Default: none. */
  file?: string;
  /** The field of the `exec` entry, for errors. Default: `"exec"`. */
  field?: string;
  /** Cluster information passed in `KUBERNETES_EXEC_INFO` when `provideClusterInfo` is set. Default: none. */
  cluster?: Record<string, unknown>;
  /** The environment the plugin inherits (before the entry's `env`). Default: the process environment. */
  env?: Record<string, string | undefined>;
  /**
   * Where the plugin's stderr goes: this process's stderr (`"inherit"`, as
   * kubectl does: plugins print warnings and hints there), nowhere
   * (`"ignore"`), or a function receiving it as text. Default: `"inherit"`.
   */
  stderr?: ExecStderr;
  /** Kill the plugin after this long. Default: `60_000`. */
  timeoutMs?: number;
  /** The clock (for `expirationTimestamp`). Default: `Date.now`. */
  now?: () => number;
}

type Credential = { token: string; expiresAt: number };

/**
 * A {@linkcode TokenProvider} running a client-go exec credential plugin
 * (`client.authentication.k8s.io/v1` or `v1beta1`), as kubectl does: the
 * entry's `command`, `args` and `env`, `KUBERNETES_EXEC_INFO` set, the
 * `ExecCredential` read from stdout. The token is cached until its
 * `expirationTimestamp` (forever without one); one plugin run at a time;
 * `refresh: true` (after a 401) runs it again. Spawns through
 * `node:child_process`, which Deno (with `--allow-run`, and env access:
 * Deno's `node:child_process` reads the environment), Node and Bun have.
 * Errors ({@linkcode KubeConfigError}) name the file, the field and the
 * command, never the plugin's output.
 *
 * The plugin's stderr is not captured: by default it goes to this
 * process's stderr, as with kubectl, so whatever the plugin prints there
 * (warnings, "run aws configure" hints) shows up in your program's stderr.
 * Pass `stderr: "ignore"` to silence it, or a function to receive it
 * (`loadKubeConfig` has `execStderr` for the same). Its stdout is only
 * parsed, never shown.
 */
export function execCredentialProvider(
  exec: ExecEntry,
  options: ExecCredentialProviderOptions = {},
): TokenProvider {
  const {
    file,
    field = "exec",
    cluster,
    env = processEnv(),
    stderr = "inherit",
    timeoutMs = 60_000,
    now = Date.now,
  } = options;
  const where = { file, field };
  const apiVersion = exec.apiVersion ?? "";
  if (!exec.command) throw new KubeConfigError("is not set", { file, field: `${field}.command` });
  if (apiVersion.endsWith("/v1") && !exec.interactiveMode) {
    throw new KubeConfigError("must be set for client.authentication.k8s.io/v1", {
      file,
      field: `${field}.interactiveMode`,
    });
  }
  if (exec.interactiveMode === "Always") {
    throw new KubeConfigError("is Always, but this library never runs plugins interactively", {
      file,
      field: `${field}.interactiveMode`,
    });
  }
  const command = !isAbsolutePath(exec.command) && /[\\/]/.test(exec.command) && file
    ? resolvePath(exec.command, file.replace(/[\\/][^\\/]*$/, "") || ".", env)
    : exec.command;
  const name = exec.command.split(/[\\/]/).pop();
  let cached: Credential | undefined;
  let running: Promise<Credential> | undefined;

  const run = async (): Promise<Credential> => {
    const { spawn } = await import("node:child_process").catch((err) => {
      throw new KubeConfigError(
        `exec plugin "${name}" cannot run: this runtime has no node:child_process`,
        {
          ...where,
          cause: err,
        },
      );
    });
    const info = {
      apiVersion,
      kind: "ExecCredential",
      spec: { interactive: false, ...(exec.provideClusterInfo && cluster ? { cluster } : {}) },
    };
    const childEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
    for (const { name, value } of exec.env ?? []) childEnv[name] = value;
    childEnv.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    const out = await new Promise<string>((resolve, reject) => {
      const fail = (why: string, cause?: unknown) =>
        reject(new KubeConfigError(`exec plugin "${name}" ${why}`, { ...where, cause }));
      let child;
      try {
        child = spawn(command, exec.args ?? [], {
          env: childEnv,
          stdio: ["ignore", "pipe", typeof stderr === "function" ? "pipe" : stderr],
        });
      } catch (err) {
        return fail(`could not start (${(err as { code?: string })?.code ?? "error"})`);
      }
      const chunks: Uint8Array[] = [];
      child.stdout!.on("data", (c: Uint8Array) => chunks.push(c));
      if (typeof stderr === "function") {
        const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
        const deliver = (text: string) => {
          try {
            if (text) stderr(text);
          } catch {
            // the caller's logger failing must not fail the credential
          }
        };
        child.stderr!.on("data", (c: Uint8Array) => deliver(decoder.decode(c, { stream: true })));
        child.stderr!.on("end", () => deliver(decoder.decode()));
      }
      // Settle exactly once. A plugin's own children may hold stdout open
      // after it exits, so `close` alone could wait forever: after `exit`,
      // give stdout a short grace to drain, and a timeout always settles.
      let settled = false;
      let grace: ReturnType<typeof setTimeout> | undefined;
      const settle = (then: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(grace);
        then();
      };
      const finish = (code: number | null, sig: string | null) =>
        settle(() => {
          if (code === 0) resolve(new TextDecoder().decode(concat(chunks)));
          else fail(sig ? `was killed (${sig})` : `exited with code ${code}`);
        });
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        child.stdout?.destroy();
        child.stderr?.destroy();
        settle(() => fail(`did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      child.on("error", (err: { code?: string }) => {
        const hint = exec.installHint ? `; ${exec.installHint}` : "";
        settle(() =>
          fail(
            err?.code === "ENOENT"
              ? `not found${hint}`
              : `could not start (${err?.code ?? "error"})`,
          )
        );
      });
      child.on("exit", (code: number | null, sig: string | null) => {
        grace = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, sig);
        }, 200);
      });
      child.on("close", (code: number | null, sig: string | null) => finish(code, sig));
    });
    return parseCredential(out, apiVersion, name ?? "", where);
  };

  return async ({ refresh, signal }) => {
    signal?.throwIfAborted();
    if (!refresh && cached && now() < cached.expiresAt) return cached.token;
    running ??= run().then((c) => (cached = c)).finally(() => {
      running = undefined;
    });
    if (!signal) return (await running).token;
    const shared = running;
    return await new Promise<string>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      shared.then((c) => resolve(c.token), reject).finally(() =>
        signal.removeEventListener("abort", onAbort)
      );
    });
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

function parseCredential(
  out: string,
  apiVersion: string,
  name: string,
  where: { file?: string; field: string },
): Credential {
  const bad = (why: string) => new KubeConfigError(`exec plugin "${name}" ${why}`, where);
  let cred: { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
  try {
    cred = JSON.parse(out);
  } catch {
    throw bad(`printed no valid JSON (${out.length} characters)`);
  }
  if (typeof cred !== "object" || cred === null || cred.kind !== "ExecCredential") {
    throw bad("printed something other than an ExecCredential");
  }
  if (cred.apiVersion !== apiVersion) {
    throw bad(`answered with another apiVersion than ${apiVersion}`);
  }
  const status = cred.status ?? {};
  if (typeof status.token !== "string" || status.token === "") {
    throw bad(
      status.clientCertificateData
        ? "returned a client certificate; only tokens are supported from exec plugins"
        : "returned no status.token",
    );
  }
  let expiresAt = Infinity;
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    expiresAt = typeof status.expirationTimestamp === "string"
      ? Date.parse(status.expirationTimestamp)
      : NaN;
    if (Number.isNaN(expiresAt)) throw bad("returned an invalid status.expirationTimestamp");
  }
  return { token: status.token, expiresAt };
}
