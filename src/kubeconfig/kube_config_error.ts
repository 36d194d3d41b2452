/**
 * What went wrong while loading a kubeconfig or in-cluster configuration:
 * a missing or unreadable file, malformed YAML, an unknown context, a field
 * of the wrong type, a certificate that does not parse, a failing exec
 * credential plugin. The message names the file and the field; it never
 * holds a secret value (tokens, passwords, keys, certificate bodies).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeConfigError } from "./kube_config_error.ts";
 * import { readKubeConfig } from "./read_kube_config.ts";
 *
 * await assert.rejects(
 *   readKubeConfig({ path: "/home/me/.kube/config", text: "users: [{ name: me, user: { token: 42 } }]" }),
 *   (err) => {
 *     assert.ok(err instanceof KubeConfigError);
 *     assert.equal(err.file, "/home/me/.kube/config");
 *     assert.match(err.message, /^\/home\/me\/\.kube\/config: users\[me\]/);
 *     return true;
 *   },
 * );
 * ```
 */
export class KubeConfigError extends Error {
  /** The file concerned, when there is one. */
  readonly file?: string;
  /** The field concerned, as a path such as `users[alice].client-key-data`. */
  readonly field?: string;

  /**
   * Creates the error; its message is `file: field: problem`, with the parts that are known.
   *
   * @param problem What is wrong, without any secret value.
   * @param where The file and field concerned (prefixed to the message as `file: field: `) and the underlying error, if any.
   */
  constructor(problem: string, where: { file?: string; field?: string; cause?: unknown } = {}) {
    const { file, field, cause } = where;
    const prefix = [file, field].filter(Boolean).join(": ");
    super(prefix ? `${prefix}: ${problem}` : problem, cause === undefined ? undefined : { cause });
    this.name = "KubeConfigError";
    this.file = file;
    this.field = field;
  }
}

/**
 * The runtime cannot make the TLS connection the configuration asks for:
 * typically an edge runtime (Cloudflare Workers, Vercel edge, Deno Deploy)
 * whose `fetch` cannot present a client certificate, trust a custom CA,
 * skip verification or override the server name. `needs` lists what the
 * configuration asks for, by kubeconfig field name.
 */
export class TlsUnsupportedError extends Error {
  /** The runtime detected (`"workerd"`, `"edge-runtime"`, `"unknown"`...). */
  readonly runtime: string;
  /** The kubeconfig fields this runtime's `fetch` cannot honour. */
  readonly needs: readonly string[];

  /**
   * Creates the error; its message names the runtime and the fields and says what to do instead.
   *
   * @param runtime The runtime detected.
   * @param needs The kubeconfig fields asking for TLS this runtime cannot do.
   * @param options `hint`: what to do instead, when something else than the default advice
   *   applies (on Node: use the entry point that loads undici). Default: the edge advice.
   */
  constructor(runtime: string, needs: readonly string[], options: { hint?: string } = {}) {
    const {
      hint = "Its fetch only trusts the system's CAs and presents no client certificate: " +
        "use a bearer token with a publicly trusted server certificate, or reach the API server " +
        "through a proxy (e.g. kubectl proxy) that does the TLS.",
    } = options;
    super(
      `this runtime (${runtime}) cannot make the TLS connection the configuration asks for: ` +
        `${needs.join(", ")}. ${hint}`,
    );
    this.name = "TlsUnsupportedError";
    this.runtime = runtime;
    this.needs = needs;
  }
}
