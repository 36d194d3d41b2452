/**
 * The few runtime services the kubeconfig loaders need that every runtime
 * has (environment, paths, base64): no `node:*` import, so the edge-safe
 * entry point (`kubeconfig_edge.ts`) can use them. Reading files lives in
 * `_node_fs.ts`, which only the Node-capable entry point reaches.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/** An environment: variable name to value. */
export type Env = Record<string, string | undefined>;

/**
 * The process environment (Deno, Node, Bun), or `{}` where there is none.
 *
 * On Deno each variable is read on its own, when asked for
 * (`Deno.env.get(name)`), never all at once: a program run with
 * `--allow-env=KUBECONFIG,HOME` loads its kubeconfig, and a variable whose
 * read is refused (`NotCapable`, `PermissionDenied`) reads as unset.
 * Enumerating it (for an exec plugin's environment) lists the whole
 * environment only when env access is granted for every variable (checked
 * without prompting), else nothing.
 */
export function processEnv(): Env {
  const denoEnv = g.Deno?.env;
  if (denoEnv?.get) return denoProcessEnv(denoEnv);
  return g.process?.env ?? {};
}

interface DenoEnv {
  get(name: string): string | undefined;
  toObject(): Record<string, string>;
}

function denoProcessEnv(denoEnv: DenoEnv): Env {
  const read = (name: string | symbol): string | undefined => {
    if (typeof name !== "string") return undefined;
    try {
      return denoEnv.get(name);
    } catch {
      // NotCapable / PermissionDenied (a scoped --allow-env), or a name Deno refuses: unset.
      return undefined;
    }
  };
  const all = (): Record<string, string> => {
    try {
      const state = g.Deno.permissions?.querySync?.({ name: "env" })?.state;
      return state === "granted" ? denoEnv.toObject() : {};
    } catch {
      return {};
    }
  };
  return new Proxy({} as Env, {
    get: (_target, name) => read(name),
    has: (_target, name) => read(name) !== undefined,
    ownKeys: () => Object.keys(all()),
    getOwnPropertyDescriptor: (_target, name) => {
      const value = read(name);
      return value === undefined
        ? undefined
        : { value, enumerable: true, configurable: true, writable: false };
    },
  });
}

/**
 * Runs `fn` (synchronous) with `process.env` reads that cannot throw. On
 * Deno without env access to every variable, `process.env.X` throws
 * `NotCapable` for a variable not granted, and npm packages read such
 * variables unasked (the `yaml` parser reads `LOG_TOKENS` and
 * `LOG_STREAM`): for the duration of `fn`, `process.env` is a view whose
 * refused reads give `undefined`. Elsewhere `fn` just runs.
 */
export function withSafeProcessEnv<T>(fn: () => T): T {
  const proc = g.process;
  if (!g.Deno?.env?.get || !proc) return fn();
  let granted = false;
  try {
    granted = g.Deno.permissions?.querySync?.({ name: "env" })?.state === "granted";
  } catch {
    granted = false;
  }
  if (granted) return fn();
  let real: unknown;
  try {
    real = proc.env;
    proc.env = processEnv();
  } catch {
    return fn(); // not replaceable: nothing better to do
  }
  try {
    return fn();
  } finally {
    proc.env = real;
  }
}

/** The runtime's name, for messages and TLS dispatch. */
export function runtimeName(): "deno" | "bun" | "node" | "workerd" | "edge-runtime" | "unknown" {
  if (g.Deno?.version?.deno) return "deno";
  if (g.Bun) return "bun";
  // Before Node: workerd has a `process` with `versions.node` (its Node compatibility layer).
  if (g.navigator?.userAgent === "Cloudflare-Workers") return "workerd";
  if (g.EdgeRuntime) return "edge-runtime";
  if (g.process?.versions?.node) return "node";
  return "unknown";
}

/** Whether `p` is absolute (POSIX, or a Windows drive / UNC path). */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\");
}

/** The folder of a file path. */
export function dirOf(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return i < 0 ? "." : i === 0 ? "/" : p.slice(0, i);
}

/** Resolves `p` against `base` (a folder) unless it is absolute; expands a leading `~/`. */
export function resolvePath(p: string, base: string, env: Env = {}): string {
  if (p === "~" || p.startsWith("~/")) {
    const home = env.HOME ?? env.USERPROFILE;
    if (home) return home + p.slice(1);
  }
  if (isAbsolutePath(p)) return p;
  const sep = base.endsWith("/") || base.endsWith("\\") ? "" : "/";
  return `${base}${sep}${p.replace(/^\.\//, "")}`;
}

/** The path separator of `KUBECONFIG` on this platform. */
export function listSeparator(): string {
  const os = g.Deno?.build?.os ?? g.process?.platform;
  return os === "windows" || os === "win32" ? ";" : ":";
}

/** Base64 (standard alphabet, padding optional, whitespace ignored) to bytes; `undefined` if invalid. */
export function decodeBase64(text: string): Uint8Array | undefined {
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return undefined;
  try {
    const bin = atob(clean);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

/** Bytes to text (UTF-8). */
export function utf8(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** Text to base64 (UTF-8). */
export function encodeBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}
