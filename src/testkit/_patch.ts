/**
 * The patch formats the fake API server applies: RFC 7386 JSON merge patch
 * and RFC 6902 JSON patch. Strategic merge patch and server-side apply are
 * served as merge patches (a limitation of the fake: lists are replaced,
 * never merged by key; no field ownership, so no apply conflicts).
 *
 * @module
 */

/** A patch that cannot be applied; `code` is what the real server answers (400 or 422). */
export class PatchError extends Error {
  constructor(readonly code: 400 | 422, message: string) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** RFC 7386: objects merge field by field, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

type Container = Record<string, unknown> | unknown[];

/** The pointer as the client wrote it (paths are rooted at an internal `/root`). */
function shown(path: string): string {
  return path.replace(/^\/root/, "");
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/"))) {
    throw new PatchError(400, `invalid JSON pointer ${JSON.stringify(pointer)}`);
  }
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function resolve(doc: unknown, tokens: string[], path: string): unknown {
  let node = doc;
  for (const token of tokens) {
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) {
      node = node[Number(token)];
    } else if (isObject(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      throw new PatchError(422, `doc is missing path: "${shown(path)}"`);
    }
  }
  return node;
}

function parentOf(doc: unknown, path: string): { parent: Container; key: string } {
  const tokens = parsePointer(path);
  if (tokens.length === 1) throw new PatchError(422, "the whole object cannot be a target");
  const parent = resolve(doc, tokens.slice(0, -1), path);
  if (!isObject(parent) && !Array.isArray(parent)) {
    throw new PatchError(422, `doc is missing path: "${shown(path)}"`);
  }
  return { parent, key: tokens.at(-1)! };
}

function index(array: unknown[], key: string, path: string, adding: boolean): number {
  if (adding && key === "-") return array.length;
  const limit = adding ? array.length : array.length - 1;
  if (!/^(0|[1-9]\d*)$/.test(key) || Number(key) > limit) {
    throw new PatchError(422, `Unable to access invalid index: ${key} (path "${shown(path)}")`);
  }
  return Number(key);
}

function add(doc: unknown, path: string, value: unknown): void {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, key, path, true), 0, value);
  else parent[key] = value;
}

function remove(doc: unknown, path: string): unknown {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) return parent.splice(index(parent, key, path, false), 1)[0];
  if (!Object.hasOwn(parent, key)) {
    throw new PatchError(422, `doc is missing path: "${shown(path)}"`);
  }
  const old = parent[key];
  delete parent[key];
  return old;
}

/** RFC 6902, applied to a copy of `target`; any failing operation fails the whole patch. */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) {
    throw new PatchError(400, "a JSON patch must be an array of operations");
  }
  const doc = { root: structuredClone(target) };
  const at = (path: unknown) => `/root${typeof path === "string" ? path : "\u0000"}`;
  for (const op of operations) {
    if (!isObject(op)) throw new PatchError(400, "each JSON patch operation must be an object");
    const path = at(op.path);
    parsePointer(op.path);
    switch (op.op) {
      case "add":
        add(doc, path, structuredClone(op.value));
        break;
      case "remove":
        remove(doc, path);
        break;
      case "replace":
        remove(doc, path);
        add(doc, path, structuredClone(op.value));
        break;
      case "move":
        parsePointer(op.from);
        add(doc, path, remove(doc, at(op.from)));
        break;
      case "copy":
        parsePointer(op.from);
        add(doc, path, structuredClone(resolve(doc, parsePointer(at(op.from)), at(op.from))));
        break;
      case "test": {
        const actual = resolve(doc, parsePointer(path), path);
        if (JSON.stringify(actual) !== JSON.stringify(op.value)) {
          throw new PatchError(422, "testing value " + String(op.path) + " failed: test failed");
        }
        break;
      }
      default:
        throw new PatchError(400, `Unexpected kind: ${JSON.stringify(op.op)}`);
    }
  }
  return doc.root;
}
