/**
 * The kubeconfig file format (`apiVersion: v1`, `kind: Config`) as far as
 * this library reads it, and its parsing: YAML (or JSON) into checked,
 * typed entries. Errors name the file and the field and never quote values.
 *
 * @module
 */
// A URL importer has no import map: `npm:` is what Deno resolves without config (build_npm.mjs rewrites it).
// deno-lint-ignore no-import-prefix
import { parseDocument } from "npm:yaml@^2";
import { withSafeProcessEnv } from "./_runtime.ts";
import { KubeConfigError } from "./kube_config_error.ts";

/** A `clusters[].cluster` entry. */
export interface ClusterEntry {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
}

/** A `users[].user.exec` entry (an exec credential plugin). */
export interface ExecEntry {
  /**
   * The `ExecCredential` version the plugin speaks:
   * `"client.authentication.k8s.io/v1"` (then `interactiveMode` is
   * required) or `"client.authentication.k8s.io/v1beta1"`.
   */
  apiVersion?: string;
  /**
   * The plugin to run (required): a command name looked up in `PATH`, an
   * absolute path, or a relative path with a `/`, which resolves against
   * the folder of the kubeconfig file that set it.
   */
  command?: string;
  /** The plugin's arguments. Default: none. */
  args?: string[];
  /** Environment variables set for the plugin, on top of the inherited environment. Default: none. */
  env?: Array<{ name: string; value: string }>;
  /** Text added to the error when the plugin cannot be started (how to install it). Default: none. */
  installHint?: string;
  /** Pass the cluster's details to the plugin in `KUBERNETES_EXEC_INFO`. Default: `false`. */
  provideClusterInfo?: boolean;
  /**
   * `"Never"` or `"IfAvailable"` (the plugin never gets a terminal here);
   * `"Always"` is refused. Required for `v1`. Default: none.
   */
  interactiveMode?: string;
}

/** A `users[].user` entry. */
export interface UserEntry {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  username?: string;
  password?: string;
  exec?: ExecEntry;
  "auth-provider"?: { name?: string };
}

/** A `contexts[].context` entry. */
export interface ContextEntry {
  /** The name of the context's `clusters[]` entry. */
  cluster?: string;
  /** The name of the context's `users[]` entry. */
  user?: string;
  /** The context's default namespace, if it sets one. */
  namespace?: string;
}

/** One named entry and the file it came from (relative paths resolve against it). */
export interface Named<T> {
  name: string;
  value: T;
  file: string;
}

/** One parsed kubeconfig file. */
export interface ParsedFile {
  file: string;
  clusters: Named<ClusterEntry>[];
  users: Named<UserEntry>[];
  contexts: Named<ContextEntry>[];
  currentContext?: string;
}

const STRING_FIELDS: Record<string, readonly string[]> = {
  cluster: [
    "server",
    "certificate-authority",
    "certificate-authority-data",
    "tls-server-name",
    "proxy-url",
  ],
  user: [
    "token",
    "tokenFile",
    "client-certificate",
    "client-certificate-data",
    "client-key",
    "client-key-data",
    "username",
    "password",
  ],
  context: ["cluster", "user", "namespace"],
  exec: ["apiVersion", "command", "installHint", "interactiveMode"],
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkFields(
  kind: string,
  value: Record<string, unknown>,
  file: string,
  field: string,
): void {
  for (const key of STRING_FIELDS[kind] ?? []) {
    if (value[key] !== undefined && value[key] !== null && typeof value[key] !== "string") {
      throw new KubeConfigError("must be a string", { file, field: `${field}.${key}` });
    }
    if (value[key] === null) delete value[key];
  }
}

function checkExec(exec: unknown, file: string, field: string): void {
  if (exec === undefined || exec === null) return;
  if (!isRecord(exec)) throw new KubeConfigError("must be a mapping", { file, field });
  checkFields("exec", exec, file, field);
  if (
    exec.args != null &&
    (!Array.isArray(exec.args) || !exec.args.every((a) => typeof a === "string"))
  ) {
    throw new KubeConfigError("must be a list of strings", { file, field: `${field}.args` });
  }
  if (exec.env != null) {
    const ok = Array.isArray(exec.env) &&
      exec.env.every((e) =>
        isRecord(e) && typeof e.name === "string" && typeof e.value === "string"
      );
    if (!ok) {
      throw new KubeConfigError("must be a list of {name, value} strings", {
        file,
        field: `${field}.env`,
      });
    }
  }
  if (exec.provideClusterInfo != null && typeof exec.provideClusterInfo !== "boolean") {
    throw new KubeConfigError("must be true or false", {
      file,
      field: `${field}.provideClusterInfo`,
    });
  }
}

function namedList<T>(
  doc: Record<string, unknown>,
  list: string,
  inner: string,
  file: string,
): Named<T>[] {
  const raw = doc[list];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new KubeConfigError("must be a list", { file, field: list });
  return raw.map((item, i) => {
    if (!isRecord(item) || typeof item.name !== "string" || item.name === "") {
      throw new KubeConfigError("needs a non-empty `name`", { file, field: `${list}[${i}]` });
    }
    const field = `${list}[${item.name}].${inner}`;
    const value = item[inner] ?? {};
    if (!isRecord(value)) throw new KubeConfigError("must be a mapping", { file, field });
    checkFields(inner, value, file, field);
    if (inner === "cluster") {
      const v = value["insecure-skip-tls-verify"];
      if (v !== undefined && v !== null && typeof v !== "boolean") {
        throw new KubeConfigError("must be true or false", {
          file,
          field: `${field}.insecure-skip-tls-verify`,
        });
      }
    }
    if (inner === "user") checkExec(value.exec, file, `${field}.exec`);
    return { name: item.name, value: value as T, file };
  });
}

/** Line and column (1-based) of a character offset. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split("\n").length;
  const col = offset - before.lastIndexOf("\n");
  return `line ${line}, column ${col}`;
}

/**
 * Parses one kubeconfig file's text. An empty file is an empty config (as
 * in kubectl). Throws {@linkcode KubeConfigError} naming `file` and the
 * field on malformed YAML or a field of the wrong type.
 */
export function parseKubeConfigText(text: string, file: string): ParsedFile {
  let data: unknown;
  try {
    // The parser reads LOG_TOKENS and LOG_STREAM: harmless, unless Deno refuses them.
    const doc = withSafeProcessEnv(() =>
      parseDocument(text, { prettyErrors: false, uniqueKeys: true })
    );
    const first = doc.errors[0];
    if (first) {
      // The yaml library's own messages may quote the source: report position and code only.
      throw new KubeConfigError(
        `malformed YAML at ${lineCol(text, first.pos[0])} (${first.code})`,
        { file },
      );
    }
    data = withSafeProcessEnv(() => doc.toJS({ maxAliasCount: 100 }));
  } catch (err) {
    if (err instanceof KubeConfigError) throw err;
    throw new KubeConfigError(`malformed YAML (${(err as Error)?.name ?? "error"})`, { file });
  }
  if (data === null || data === undefined) data = {};
  if (!isRecord(data)) {
    throw new KubeConfigError("is not a kubeconfig (the top level must be a mapping)", { file });
  }
  if (data.kind !== undefined && data.kind !== "Config") {
    throw new KubeConfigError("must be Config", { file, field: "kind" });
  }
  const current = data["current-context"];
  if (current !== undefined && current !== null && typeof current !== "string") {
    throw new KubeConfigError("must be a string", { file, field: "current-context" });
  }
  return {
    file,
    clusters: namedList<ClusterEntry>(data, "clusters", "cluster", file),
    users: namedList<UserEntry>(data, "users", "user", file),
    contexts: namedList<ContextEntry>(data, "contexts", "context", file),
    currentContext: current || undefined,
  };
}
