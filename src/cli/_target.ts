/**
 * What `watch`, `get` and `changes` share: the flags that say what to read
 * and where (`-n`, `-A`, `-l`, `--field-selector`, `--kubeconfig`,
 * `--context`, `--server`), the RESOURCE [NAME] arguments, and turning them
 * into a connection, a resource resolved by discovery, and the namespace.
 *
 * @module
 */
import type { ApiResource } from "../discovery/api_resource.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import type { CliEnv } from "./cli_env.ts";
import type { FlagSpec, ParsedFlags } from "./_flags.ts";
import { type CliConnection, connect } from "./_connect.ts";
import { UsageError } from "./_usage_error.ts";

/** Resolves a resource name as kubectl does, refusing one without `verb`. */
export type ResolveResource = (
  client: KubeClient,
  name: string,
  options: { verb: string; signal: AbortSignal },
) => Promise<ApiResource>;

/** The flags shared by `watch`, `get` and `changes`. */
export const TARGET_FLAGS: readonly FlagSpec[] = [
  { name: "namespace", short: "n", switch: false },
  { name: "all-namespaces", short: "A", switch: true },
  { name: "selector", short: "l", switch: false },
  { name: "field-selector", switch: false },
  { name: "kubeconfig", switch: false },
  { name: "context", switch: false },
  { name: "server", switch: false },
  { name: "help", short: "h", switch: true },
];

/** What to read, resolved. */
export interface Target {
  conn: CliConnection;
  resource: ApiResource;
  /** The namespace to read; undefined: every namespace (or a cluster-scoped resource). */
  namespace?: string;
  /** True when reading a namespaced resource across namespaces (a NAMESPACE column). */
  allNamespaces: boolean;
  labelSelector?: string;
  /** `--field-selector`, with `metadata.name=NAME` added for NAME. */
  fieldSelector?: string;
  /** NAME, when given. */
  name?: string;
}

/** RESOURCE and NAME from the arguments (usage errors for none or too many). */
export function resourceArgs(
  parsed: ParsedFlags,
  command: string,
  allowName: boolean,
): { resource: string; name?: string } {
  const [resource, name, ...extra] = parsed.positionals;
  if (resource === undefined || resource === "") {
    throw new UsageError("missing RESOURCE (e.g. pods, deploy, configmaps)", command);
  }
  if (extra.length > 0 || (!allowName && name !== undefined)) {
    const rest = allowName ? extra : [name!, ...extra];
    throw new UsageError(`unexpected argument: ${rest.join(" ")}`, command);
  }
  if (name === "") throw new UsageError("NAME is empty", command);
  return { resource, name };
}

/** How a command opens its target. */
export interface OpenTargetOptions {
  command: string;
  /** The verb the resource must serve. */
  verb: string;
  /** The verb it must serve when NAME is given (`get`'s GET of one object: `"get"`). Default: `verb`. */
  verbWithName?: string;
  /** Whether NAME may be given. */
  allowName: boolean;
  /**
   * True: NAME with `-l` or `--field-selector` is a usage error, as in
   * kubectl (`get` reads NAME with a GET, which takes no selector).
   */
  nameExcludesSelectors?: boolean;
  resolve: ResolveResource;
}

/**
 * Connects, resolves the resource and decides the namespace. NAME of a
 * namespaced resource with `-A` is a usage error, as in kubectl.
 */
export async function openTarget(
  env: CliEnv,
  parsed: ParsedFlags,
  options: OpenTargetOptions,
): Promise<Target> {
  const { command } = options;
  const args = resourceArgs(parsed, command, options.allowName);
  const v = parsed.values;
  const all = v.get("all-namespaces") === "true";
  const ns = v.get("namespace");
  if (ns === "") throw new UsageError("--namespace is empty", command);
  for (const flag of ["selector", "field-selector"]) {
    if (v.get(flag) === "") throw new UsageError(`--${flag} is empty`, command);
  }
  if (
    options.nameExcludesSelectors && args.name !== undefined &&
    (v.has("selector") || v.has("field-selector"))
  ) {
    throw new UsageError("name cannot be provided when a selector is specified", command);
  }
  const conn = await connect(
    {
      server: v.get("server"),
      kubeconfig: v.get("kubeconfig"),
      context: v.get("context"),
    },
    env,
    command,
  );
  try {
    const resource = await options.resolve(conn.client, args.resource, {
      verb: args.name === undefined ? options.verb : options.verbWithName ?? options.verb,
      signal: env.signal,
    });
    if (args.name !== undefined && all && resource.namespaced) {
      // kubectl's refusal: one name may be many objects across namespaces
      throw new UsageError(
        "a resource cannot be retrieved by name across all namespaces",
        command,
      );
    }
    // kubectl: -A wins over -n; a cluster-scoped resource ignores both.
    const namespace = !resource.namespaced || all ? undefined : ns ?? conn.namespace;
    const fieldSelector = [
      ...(args.name === undefined ? [] : [`metadata.name=${args.name}`]),
      ...(v.has("field-selector") ? [v.get("field-selector")!] : []),
    ].join(",") || undefined;
    return {
      conn,
      resource,
      namespace,
      allNamespaces: resource.namespaced && namespace === undefined,
      labelSelector: v.get("selector"),
      fieldSelector,
      name: args.name,
    };
  } catch (err) {
    await conn.close();
    throw err;
  }
}

/** What a resource is called in messages: `configmaps`, `deployments.apps`. */
export function resourceLabel(resource: ApiResource): string {
  return resource.group === "" ? resource.resource : `${resource.resource}.${resource.group}`;
}
