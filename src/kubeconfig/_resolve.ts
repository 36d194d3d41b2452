/**
 * Turns a context of a merged kubeconfig into what a connection needs: the
 * server, TLS material (files read, base64 decoded, checked) and the
 * credential source. Every failure names the file and the field.
 *
 * @module
 */
import { checkCertificates, checkPrivateKey } from "./_pem.ts";
import { decodeBase64, dirOf, type Env, resolvePath, utf8 } from "./_runtime.ts";
import type { ClusterEntry, ExecEntry, Named, UserEntry } from "./_schema.ts";
import { _kubeConfigData, type KubeConfig } from "./kube_config.ts";
import { KubeConfigError } from "./kube_config_error.ts";

/** TLS settings of a connection (PEM text). */
export interface TlsSettings {
  /** CA certificates to trust instead of the system's. */
  ca?: string;
  /** Client certificate chain. */
  cert?: string;
  /** Client private key. */
  key?: string;
  /** Skip server certificate verification (only when the config says so). */
  insecure?: boolean;
  /** The name to verify the server certificate against (and send as SNI). */
  serverName?: string;
  /** The kubeconfig field each setting came from, for messages. */
  fields?: Partial<Record<"ca" | "cert" | "key" | "insecure" | "serverName", string>>;
}

/**
 * Reads a text file named by the kubeconfig; `where` names the file and
 * field that named it, for errors. Absent on the edge-safe entry point.
 */
export type ReadFile = (path: string, where: { file?: string; field?: string }) => Promise<string>;

/** What the edge-safe entry point says where the kubeconfig names a file. */
export const EDGE_FILE_HINT =
  "kube-reflector/kubeconfig/edge reads no files; use kube-reflector/kubeconfig where files can be read";

/** Where the credential comes from. */
export type AuthSource =
  | { kind: "none" }
  | { kind: "token"; token: string }
  | { kind: "tokenFile"; path: string; field: string; file: string }
  | { kind: "basic"; username: string; password: string }
  | { kind: "exec"; exec: ExecEntry; field: string; file: string; cluster: ClusterEntry };

/** A resolved context. */
export interface ResolvedContext {
  context: string;
  cluster: string;
  user: string;
  namespace: string;
  server: string;
  tls: TlsSettings;
  auth: AuthSource;
}

/** Reads `<name>` (a path) or `<name>-data` (base64) of an entry; the data field wins, as in client-go. */
async function material(
  entry: Named<ClusterEntry | UserEntry>,
  kind: "cluster" | "user",
  name: "certificate-authority" | "client-certificate" | "client-key",
  env: Env,
  readFile: ReadFile | undefined,
): Promise<{ pem: string; field: string; file: string } | undefined> {
  const v = entry.value as Record<string, string | undefined>;
  const base = `${kind}s[${entry.name}].${kind}`;
  const data = v[`${name}-data`];
  if (data) {
    const bytes = decodeBase64(data);
    const field = `${base}.${name}-data`;
    if (!bytes) throw new KubeConfigError("is not valid base64", { file: entry.file, field });
    return { pem: utf8(bytes), field, file: entry.file };
  }
  const path = v[name];
  if (!path) return undefined;
  const field = `${base}.${name}`;
  if (!readFile) {
    throw new KubeConfigError(
      `names a file: inline it as ${name}-data (base64); ${EDGE_FILE_HINT}`,
      {
        file: entry.file,
        field,
      },
    );
  }
  const full = resolvePath(path, dirOf(entry.file), env);
  return { pem: await readFile(full, { file: entry.file, field }), field, file: entry.file };
}

/**
 * Resolves `contextName` (default: `current-context`) of `config`.
 * Throws {@linkcode KubeConfigError} on an unknown context, cluster or user,
 * a missing server, unreadable or unparsable certificate material, or
 * conflicting credentials. Without `readFile` (the edge-safe entry point),
 * certificate material must be inline (`*-data`).
 */
export async function resolveContext(
  config: KubeConfig,
  contextName: string | undefined,
  env: Env,
  readFile?: ReadFile,
): Promise<ResolvedContext> {
  const data = _kubeConfigData(config);
  const files = config.files.join(", ");
  const name = contextName ?? data.currentContext?.name;
  if (!name) {
    throw new KubeConfigError("no context chosen and no current-context set", { file: files });
  }
  const ctx = data.contexts.get(name);
  if (!ctx) {
    const field = contextName ? "context" : "current-context";
    throw new KubeConfigError(`unknown context "${name}"`, {
      file: contextName ? files : data.currentContext?.file,
      field,
    });
  }
  const ctxField = `contexts[${name}].context`;
  const clusterName = ctx.value.cluster;
  if (!clusterName) {
    throw new KubeConfigError("is not set", { file: ctx.file, field: `${ctxField}.cluster` });
  }
  const cluster = data.clusters.get(clusterName);
  if (!cluster) {
    throw new KubeConfigError(`unknown cluster "${clusterName}"`, {
      file: ctx.file,
      field: `${ctxField}.cluster`,
    });
  }
  const userName = ctx.value.user ?? "";
  const user: Named<UserEntry> = userName
    ? data.users.get(userName) ??
      (() => {
        throw new KubeConfigError(`unknown user "${userName}"`, {
          file: ctx.file,
          field: `${ctxField}.user`,
        });
      })()
    : { name: "", value: {}, file: ctx.file };

  const c = cluster.value;
  const clusterField = `clusters[${clusterName}].cluster`;
  if (!c.server) {
    throw new KubeConfigError("is not set", {
      file: cluster.file,
      field: `${clusterField}.server`,
    });
  }
  let url: URL;
  try {
    url = new URL(c.server);
  } catch {
    throw new KubeConfigError("is not a URL", {
      file: cluster.file,
      field: `${clusterField}.server`,
    });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new KubeConfigError("must be an http(s) URL", {
      file: cluster.file,
      field: `${clusterField}.server`,
    });
  }
  if (url.username || url.password) {
    throw new KubeConfigError("must not hold credentials", {
      file: cluster.file,
      field: `${clusterField}.server`,
    });
  }
  if (c["proxy-url"]) {
    throw new KubeConfigError("is not supported", {
      file: cluster.file,
      field: `${clusterField}.proxy-url`,
    });
  }

  const tls: TlsSettings = { fields: {} };
  const ca = await material(cluster, "cluster", "certificate-authority", env, readFile);
  if (ca) {
    checkCertificates(ca.pem, ca);
    tls.ca = ca.pem;
    tls.fields!.ca = ca.field;
  }
  if (c["insecure-skip-tls-verify"] === true) {
    tls.insecure = true;
    tls.fields!.insecure = `${clusterField}.insecure-skip-tls-verify`;
    if (ca) {
      throw new KubeConfigError("cannot be combined with a certificate authority", {
        file: cluster.file,
        field: tls.fields!.insecure,
      });
    }
  }
  if (c["tls-server-name"]) {
    tls.serverName = c["tls-server-name"];
    tls.fields!.serverName = `${clusterField}.tls-server-name`;
  }

  const u = user.value;
  const userField = `users[${user.name}].user`;
  const cert = await material(user, "user", "client-certificate", env, readFile);
  const key = await material(user, "user", "client-key", env, readFile);
  if (cert && !key) {
    throw new KubeConfigError("is not set", { file: user.file, field: `${userField}.client-key` });
  }
  if (key && !cert) {
    throw new KubeConfigError("is not set", {
      file: user.file,
      field: `${userField}.client-certificate`,
    });
  }
  if (cert && key) {
    checkCertificates(cert.pem, cert);
    checkPrivateKey(key.pem, key);
    tls.cert = cert.pem;
    tls.key = key.pem;
    tls.fields!.cert = cert.field;
    tls.fields!.key = key.field;
  }

  const conflict = (a: string, b: string) =>
    new KubeConfigError(`set only one of ${a} and ${b}`, { file: user.file, field: userField });
  let auth: AuthSource = { kind: "none" };
  if (u["auth-provider"]) {
    throw new KubeConfigError(
      `auth-provider "${
        u["auth-provider"].name ?? ""
      }" is not supported; use an exec credential plugin`,
      { file: user.file, field: `${userField}.auth-provider` },
    );
  }
  if (u.token) auth = { kind: "token", token: u.token };
  else if (u.tokenFile) {
    const field = `${userField}.tokenFile`;
    auth = {
      kind: "tokenFile",
      path: resolvePath(u.tokenFile, dirOf(user.file), env),
      field,
      file: user.file,
    };
  }
  if (u.username || u.password) {
    if (auth.kind !== "none") throw conflict("token/tokenFile", "username/password");
    if (!u.username) {
      throw new KubeConfigError("is not set", { file: user.file, field: `${userField}.username` });
    }
    auth = { kind: "basic", username: u.username, password: u.password ?? "" };
  }
  if (u.exec) {
    if (auth.kind !== "none") {
      throw conflict(auth.kind === "basic" ? "username/password" : "token/tokenFile", "exec");
    }
    const field = `${userField}.exec`;
    if (!u.exec.command) {
      throw new KubeConfigError("is not set", { file: user.file, field: `${field}.command` });
    }
    const api = u.exec.apiVersion;
    if (
      api !== "client.authentication.k8s.io/v1" && api !== "client.authentication.k8s.io/v1beta1"
    ) {
      throw new KubeConfigError(
        "must be client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1",
        { file: user.file, field: `${field}.apiVersion` },
      );
    }
    auth = { kind: "exec", exec: u.exec, field, file: user.file, cluster: c };
  }
  return {
    context: name,
    cluster: clusterName,
    user: user.name,
    namespace: ctx.value.namespace || "default",
    server: c.server,
    tls,
    auth,
  };
}
