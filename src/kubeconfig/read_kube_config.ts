import { fileExists, readText } from "./_node_fs.ts";
import { listSeparator, processEnv } from "./_runtime.ts";
import { type ParsedFile, parseKubeConfigText } from "./_schema.ts";
import { KubeConfig } from "./kube_config.ts";
import { KubeConfigError } from "./kube_config_error.ts";

/** Options of {@linkcode readKubeConfig}. */
export interface ReadKubeConfigOptions {
  /**
   * One kubeconfig file to read (kubectl's `--kubeconfig`); it must exist.
   * Default: the files listed in `KUBECONFIG`, else `~/.kube/config`.
   */
  path?: string;
  /**
   * The kubeconfig's text itself (YAML or JSON), for runtimes without a file
   * system; `path` then only names it in errors and anchors relative paths.
   * Default: read from files.
   */
  text?: string;
  /** The environment (`KUBECONFIG`, `HOME`). Default: the process environment. */
  env?: Record<string, string | undefined>;
}

/**
 * Reads and merges kubeconfig files as kubectl does: an explicit `path`;
 * else every file listed in `KUBECONFIG` (`:`-separated, `;` on Windows;
 * missing ones skipped, the first file winning for each name); else
 * `~/.kube/config`. Errors ({@linkcode KubeConfigError}) name the file and
 * the field, never a secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 * import { readKubeConfig } from "./read_kube_config.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const a = join(dir, "a.yaml");
 *   const b = join(dir, "b.yaml");
 *   await Deno.writeTextFile(a, "current-context: dev\ncontexts: [{ name: dev, context: { cluster: dev } }]\n");
 *   await Deno.writeTextFile(b, "current-context: prod\ncontexts: [{ name: prod, context: { cluster: prod } }]\n");
 *   // As kubectl: every listed file that exists, the first one winning for each name.
 *   const config = await readKubeConfig({ env: { KUBECONFIG: `${a}:${join(dir, "missing")}:${b}` } });
 *   assert.deepEqual(config.files, [a, b]);
 *   assert.equal(config.currentContext, "dev");
 *   assert.deepEqual(config.contextNames(), ["dev", "prod"]);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function readKubeConfig(options: ReadKubeConfigOptions = {}): Promise<KubeConfig> {
  const { path, text, env = processEnv() } = options;
  if (text !== undefined) {
    return KubeConfig.merge([parseKubeConfigText(text, path ?? "<kubeconfig text>")]);
  }
  if (path) return KubeConfig.merge([parseKubeConfigText(await readText(path), path)]);

  const listed = (env.KUBECONFIG ?? "").split(listSeparator()).filter((p) => p !== "");
  if (listed.length > 0) {
    const parsed: ParsedFile[] = [];
    for (const file of new Set(listed)) {
      if (!(await fileExists(file))) continue;
      parsed.push(parseKubeConfigText(await readText(file), file));
    }
    if (parsed.length === 0) {
      throw new KubeConfigError(
        `none of the ${listed.length} file(s) listed exists: ${listed.join(", ")}`,
        {
          field: "KUBECONFIG",
        },
      );
    }
    return KubeConfig.merge(parsed);
  }

  const home = env.HOME ?? env.USERPROFILE;
  if (!home) {
    // On Deno without --allow-env the variables read as unset: say so, naming the flag.
    const envDenied = options.env === undefined && !denoEnvGranted("HOME");
    throw new KubeConfigError(
      envDenied
        ? "no kubeconfig: KUBECONFIG and HOME cannot be read: run Deno with --allow-env=KUBECONFIG,HOME (or pass path or text)"
        : "no kubeconfig: KUBECONFIG is unset and HOME is unknown",
      { field: "HOME" },
    );
  }
  const file = `${home.replace(/[\\/]$/, "")}/.kube/config`;
  return KubeConfig.merge([parseKubeConfigText(await readText(file), file)]);
}

/** False when this is Deno and reading `name` from the environment is not granted. */
function denoEnvGranted(name: string): boolean {
  type Permissions = { querySync?(d: { name: "env"; variable: string }): { state: string } };
  const deno = (globalThis as { Deno?: { permissions?: Permissions } }).Deno;
  if (!deno) return true;
  try {
    return deno.permissions?.querySync?.({ name: "env", variable: name })?.state !== "denied" &&
      deno.permissions?.querySync?.({ name: "env", variable: name })?.state !== "prompt";
  } catch {
    return true;
  }
}
