/**
 * Reading files for the kubeconfig loaders of the Node-capable entry point
 * (`kubeconfig.ts`): `node:fs/promises`, which Node, Deno and Bun have,
 * loaded on first use. The edge-safe entry point never reaches this module.
 *
 * @module
 */
import { KubeConfigError } from "./kube_config_error.ts";

/** The part of `node:fs/promises` used here (typed here, so the declarations need no `@types/node`). */
interface Fs {
  readFile(path: string, encoding: "utf8"): Promise<string>;
  stat(path: string): Promise<unknown>;
}
let fsPromise: Promise<Fs> | undefined;

/** `node:fs/promises`, loaded on first use. */
export function nodeFs(): Promise<Fs> {
  fsPromise ??= import("node:fs/promises").catch((err) => {
    fsPromise = undefined;
    throw new KubeConfigError(`this runtime cannot read files (node:fs is unavailable)`, {
      cause: err,
    });
  });
  return fsPromise;
}
/** Whether a file exists (and can be stat'ed). */
export async function fileExists(path: string): Promise<boolean> {
  const fs = await nodeFs();
  try {
    await fs.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a text file; a failure becomes a {@linkcode KubeConfigError} naming
 * `what` (the file, or the file and field that referred to it).
 */
export async function readText(
  path: string,
  where: { file?: string; field?: string } = {},
): Promise<string> {
  const fs = await nodeFs();
  try {
    return await fs.readFile(path, "utf8");
  } catch (err) {
    const code = (err as { code?: string })?.code;
    const why = code === "ENOENT"
      ? "no such file"
      : (err as Error)?.name === "NotCapable" || (err as Error)?.name === "PermissionDenied"
      ? `the runtime denied read access: run Deno with --allow-read=${path}`
      : code === "EACCES"
      ? "permission denied"
      : code ?? (err as Error)?.name ?? "read failed";
    const subject = where.file && where.file !== path
      ? `cannot read ${path} (${why})`
      : `cannot read file (${why})`;
    throw new KubeConfigError(subject, {
      file: where.file ?? path,
      field: where.field,
      cause: err,
    });
  }
}
