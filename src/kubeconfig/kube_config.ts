import type { ClusterEntry, ContextEntry, Named, ParsedFile, UserEntry } from "./_schema.ts";

/** The merged entries of a {@linkcode KubeConfig}, for the resolver. */
export interface KubeConfigData {
  clusters: Map<string, Named<ClusterEntry>>;
  users: Map<string, Named<UserEntry>>;
  contexts: Map<string, Named<ContextEntry>>;
  currentContext?: { name: string; file: string };
}

const DATA = new WeakMap<KubeConfig, KubeConfigData>();

/** @internal The merged entries of `config` (they hold secrets: never log them). */
export function _kubeConfigData(config: KubeConfig): KubeConfigData {
  const data = DATA.get(config);
  if (!data) throw new TypeError("not a KubeConfig");
  return data;
}

const inspectNode = Symbol.for("nodejs.util.inspect.custom");
const inspectDeno = Symbol.for("Deno.customInspect");

/**
 * One or more kubeconfig files merged as kubectl merges them: for each
 * cluster, user and context name the first file that defines it wins, and
 * the first non-empty `current-context` wins. Entries remember their file,
 * so relative paths resolve against the folder of the file that set them.
 *
 * The credentials it holds are private: `JSON.stringify`, `inspect` and
 * `console.log` show file names and entry names only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeConfig } from "./kube_config.ts";
 * import { parseKubeConfigText } from "./_schema.ts";
 *
 * const config = KubeConfig.merge([
 *   parseKubeConfigText("current-context: dev\ncontexts: [{name: dev, context: {cluster: c, user: u}}]", "/a"),
 *   parseKubeConfigText("current-context: prod\nusers: [{name: u, user: {token: s3cr3t}}]", "/b"),
 * ]);
 * assert.equal(config.currentContext, "dev"); // the first file wins
 * assert.deepEqual(config.userNames(), ["u"]);
 * assert.equal(JSON.stringify(config), '{"files":["/a","/b"],"currentContext":"dev","contexts":["dev"]}');
 * ```
 */
export class KubeConfig {
  /** The files merged, in precedence order. */
  readonly files: readonly string[];

  private constructor(files: string[], data: KubeConfigData) {
    this.files = Object.freeze(files);
    DATA.set(this, data);
  }

  /** Merges parsed files, the first one winning for each name. */
  static merge(parsed: readonly ParsedFile[]): KubeConfig {
    const data: KubeConfigData = { clusters: new Map(), users: new Map(), contexts: new Map() };
    for (const p of parsed) {
      for (const c of p.clusters) if (!data.clusters.has(c.name)) data.clusters.set(c.name, c);
      for (const u of p.users) if (!data.users.has(u.name)) data.users.set(u.name, u);
      for (const c of p.contexts) if (!data.contexts.has(c.name)) data.contexts.set(c.name, c);
      if (!data.currentContext && p.currentContext) {
        data.currentContext = { name: p.currentContext, file: p.file };
      }
    }
    return new KubeConfig(parsed.map((p) => p.file), data);
  }

  /** The `current-context` in effect, if any. */
  get currentContext(): string | undefined {
    return _kubeConfigData(this).currentContext?.name;
  }

  /** The names of every context. */
  contextNames(): string[] {
    return [..._kubeConfigData(this).contexts.keys()];
  }

  /** The names of every cluster. */
  clusterNames(): string[] {
    return [..._kubeConfigData(this).clusters.keys()];
  }

  /** The names of every user. */
  userNames(): string[] {
    return [..._kubeConfigData(this).users.keys()];
  }

  /** A context's cluster, user and namespace names (no credentials). */
  context(name: string): ContextEntry | undefined {
    const c = _kubeConfigData(this).contexts.get(name);
    return c ? { ...c.value } : undefined;
  }

  /** What `JSON.stringify` shows: names only, no credentials. */
  toJSON(): { files: readonly string[]; currentContext?: string; contexts: string[] } {
    return {
      files: this.files,
      currentContext: this.currentContext,
      contexts: this.contextNames(),
    };
  }

  /** What Node's `util.inspect` (and `console.log`) shows: the `toJSON()` view, no credentials. */
  [inspectNode](): string {
    return `KubeConfig ${JSON.stringify(this.toJSON())}`;
  }

  /** What Deno's `Deno.inspect` (and `console.log`) shows: the `toJSON()` view, no credentials. */
  [inspectDeno](): string {
    return `KubeConfig ${JSON.stringify(this.toJSON())}`;
  }
}
