/**
 * `kube-reflector get RESOURCE [NAME]`: lists the objects and prints them
 * (`-o table|wide|json|ndjson|name`). With `table`/`wide` it lists with
 * the server's `Table` format, as kubectl does (the informer cannot: it
 * needs whole objects), in pages of 500; other formats list whole objects
 * the same way. A long list shows its progress on stderr when stderr is a
 * terminal. With NAME it reads that one object with a GET, as kubectl does
 * (the RBAC verb `get`: a Role restricted by `resourceNames` allows it),
 * as a `Table` for `table`/`wide`.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObjectLike } from "../api/types.ts";
import type { ApiResource } from "../discovery/api_resource.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import { resourcePath } from "../transport/resource_path.ts";
import type { CliEnv, Command } from "./cli_env.ts";
import { parseFlags } from "./_flags.ts";
import { GET_HELP } from "./_help.ts";
import { type Listed, listPages } from "./_list_pages.ts";
import { jsonText, nameLine, ndjsonLine, type OutputFormat, outputFormat } from "./_output.ts";
import { EXIT, runCommand } from "./_run_command.ts";
import {
  AlignedText,
  fallbackColumns,
  isServerTable,
  serverColumns,
  TABLE_ACCEPT,
} from "./_table.ts";
import { openTarget, type ResolveResource, resourceLabel, TARGET_FLAGS } from "./_target.ts";
import { defaultResolve } from "./_default_resolve.ts";
import { UsageError } from "./_usage_error.ts";
import { withKindOf } from "./_with_kind.ts";

/** Internals tests set: the clock for AGE, the resolver, the page size. */
export interface GetInternals {
  now?: () => number;
  resolve?: ResolveResource;
  pageSize?: number;
}

const FLAGS = [...TARGET_FLAGS, { name: "output", short: "o", switch: false }];

/** The `get` command. */
export const get: Command = (env) => runGet(env);

/** `get`, with internals for tests. */
export function runGet(env: CliEnv, internals: GetInternals = {}): Promise<number> {
  return runCommand(env, { interruptedCode: EXIT.interrupted }, async () => {
    const parsed = parseFlags(env.args, FLAGS, "get");
    if (parsed.values.get("help") === "true") {
      env.stdout(GET_HELP);
      return EXIT.ok;
    }
    const format: OutputFormat = outputFormat(parsed.values.get("output"), "get");
    const target = await openTarget(env, parsed, {
      command: "get",
      verb: "list",
      verbWithName: "get",
      allowName: true,
      nameExcludesSelectors: true,
      resolve: internals.resolve ?? defaultResolve,
    });
    const { conn, resource } = target;
    try {
      const tabular = format === "table" || format === "wide";
      const accept = tabular ? TABLE_ACCEPT : "application/json";
      const label = resourceLabel(resource);
      let progressShown = false;
      const listed = target.name !== undefined
        ? await getOne(conn.client, namePath(resource, target), accept, env.signal).catch((err) => {
          if (err instanceof KubeStatusError && err.code === 404) {
            throw new Error(`${label} "${target.name}" not found${where(target.namespace)}`);
          }
          throw err;
        })
        : await listPages({
          client: conn.client,
          path: resourcePath({ ...resource, namespace: target.namespace }),
          accept,
          labelSelector: target.labelSelector,
          fieldSelector: target.fieldSelector,
          pageSize: internals.pageSize ?? 500,
          signal: env.signal,
          onProgress: env.stderrIsTerminal
            ? (n, remaining) => {
              progressShown = true;
              const of = remaining === undefined ? "" : ` of ~${n + remaining}`;
              env.stderr(`\r\x1b[Klisted ${n}${of} ${label}`);
            }
            : undefined,
        });
      if (progressShown) env.stderr("\r\x1b[K");
      const objects = listed.items.map((i) => withKindOf(resource, i.object));
      if (target.name !== undefined && objects.length === 0) {
        throw new Error(`${label} "${target.name}" not found${where(target.namespace)}`);
      }
      if (format === "json") {
        env.stdout(jsonText(
          target.name !== undefined ? objects[0] : {
            apiVersion: "v1",
            kind: "List",
            metadata: { resourceVersion: "" },
            items: objects,
          },
        ));
      } else if (format === "ndjson") {
        env.stdout(objects.map((o) => ndjsonLine(o)).join(""));
      } else if (format === "name") {
        env.stdout(objects.map((o) => nameLine(resource, o)).join(""));
      } else if (objects.length === 0) {
        env.stderr(`No resources found${where(target.namespace)}.\n`);
      } else {
        const options = {
          wide: format === "wide",
          namespaceColumn: target.allNamespaces,
          now: internals.now ?? Date.now,
        };
        const columns = listed.columns
          ? serverColumns(listed.columns, options)
          : fallbackColumns(options);
        env.stdout(new AlignedText().render([
          columns.headers,
          ...listed.items.map((i) => columns.cells(i.object, i.row)),
        ]));
      }
      return EXIT.ok;
    } finally {
      await conn.close();
    }
  });
}

const where = (namespace: string | undefined) =>
  namespace === undefined ? "" : ` in ${namespace} namespace`;

/** The path of NAME (a name no path can hold, such as `a/b`, is a usage error). */
function namePath(resource: ApiResource, target: { namespace?: string; name?: string }): string {
  try {
    return resourcePath({ ...resource, namespace: target.namespace, name: target.name });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), "get");
  }
}

/**
 * One object by name, with a GET (a Table of one row when `accept` asks
 * for it and the server serves Tables; else the object), as a `Listed`.
 */
async function getOne(
  client: KubeClient,
  path: string,
  accept: string,
  signal: AbortSignal,
): Promise<Listed> {
  const body = await client.requestJson<unknown>(path, { accept, signal });
  if (isServerTable(body)) {
    return {
      columns: body.columnDefinitions,
      items: (body.rows ?? []).map((row) => ({ object: row.object ?? { metadata: {} }, row })),
    };
  }
  return { items: [{ object: body as KubeObjectLike }] };
}
