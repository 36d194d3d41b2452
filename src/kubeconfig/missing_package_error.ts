/**
 * An optional npm package that a feature needs could not be loaded: on
 * Node, custom TLS (a cluster CA, a client certificate,
 * `insecure-skip-tls-verify`, `tls-server-name`) goes through `undici`, an
 * optional peer dependency that is imported only then. The message names
 * the package, what needed it, and the command that installs it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTlsFetch } from "./tls_fetch.ts";
 * import { MissingPackageError } from "./missing_package_error.ts";
 *
 * // What happens on Node without undici installed (here: an importer that fails as import("undici") would).
 * const importUndici = () => Promise.reject(new Error("Cannot find package 'undici'"));
 * await assert.rejects(
 *   createTlsFetch({ insecure: true }, { runtime: "node", importUndici }),
 *   (err) =>
 *     err instanceof MissingPackageError && err.packageName === "undici" &&
 *     err.install === "npm install undici@^7",
 * );
 * ```
 */
export class MissingPackageError extends Error {
  /** The npm package that could not be loaded, e.g. `"undici"`. */
  readonly packageName: string;
  /** What needed it, e.g. `"custom TLS on Node (clusters[c].cluster.certificate-authority-data)"`. */
  readonly neededFor: string;
  /** The command that installs it, e.g. `"npm install undici@^7"`. */
  readonly install: string;

  /**
   * Creates the error; its message names the package, what needed it and how to install it.
   *
   * @param packageName The npm package.
   * @param neededFor What needed it.
   * @param options The version range to install (default: any) and the import's error.
   */
  constructor(
    packageName: string,
    neededFor: string,
    options: { range?: string; cause?: unknown } = {},
  ) {
    const { range, cause } = options;
    const install = `npm install ${packageName}${range ? `@${range}` : ""}`;
    super(
      `${neededFor} needs the npm package "${packageName}", which could not be loaded: ` +
        `install it with \`${install}\` (it is an optional peer dependency of kube-reflector)`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "MissingPackageError";
    this.packageName = packageName;
    this.neededFor = neededFor;
    this.install = install;
  }
}
