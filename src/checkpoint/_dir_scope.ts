/**
 * The lock scope of a directory: file storages on the same directory share
 * `saveCheckpoint`'s lock in this process, whatever path they were given
 * (relative or absolute, with `.` or `..`).
 *
 * @module
 */

/**
 * `dir` as an absolute path with `.`, `..` and repeated separators
 * resolved, `/`-separated; relative to `cwd` (left relative when `cwd` is
 * unknown). Symbolic links are not followed.
 */
export function resolveDir(dir: string, cwd: string | undefined): string {
  const drive = /^[A-Za-z]:(?=[\\/]|$)/.exec(dir)?.[0];
  const absolute = drive !== undefined || /^[\\/]/.test(dir);
  const full = absolute || cwd === undefined ? dir : `${cwd}/${dir}`;
  const root = /^[A-Za-z]:/.exec(full)?.[0] ?? "";
  const rooted = /^([A-Za-z]:)?[\\/]/.test(full);
  const parts: string[] = [];
  for (const part of full.slice(root.length).split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else if (part !== ".." || !rooted) parts.push(part);
  }
  return `${root.toUpperCase()}${rooted ? "/" : ""}${parts.join("/")}` || ".";
}

/** The working directory, where the runtime tells it (not without Deno's read permission). */
function workingDirectory(): string | undefined {
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  try {
    return g.process?.cwd?.() ?? g.Deno?.cwd?.();
  } catch {
    return undefined;
  }
}

const scopes = new Map<string, object>();

/** The lock scope of the directory `dir`: one object per resolved path, for the life of the process. */
export function dirLockScope(dir: string): object {
  const path = resolveDir(dir, workingDirectory());
  let scope = scopes.get(path);
  if (!scope) scopes.set(path, scope = { dir: path });
  return scope;
}
