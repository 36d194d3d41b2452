/**
 * The health endpoint: liveness and readiness of informers as a
 * web-standard `(Request) => Response` handler.
 *
 * @module
 */
import { type HealthOptions, resolveHealthOptions } from "./health_options.ts";
import { type HealthProbe, healthReport, healthText } from "./health_report.ts";

const PROBES: readonly HealthProbe[] = ["livez", "readyz", "healthz"];
const ALLOW = "GET, HEAD";

/**
 * A health endpoint for the informers of a process, as a web-standard
 * handler: pass it to `Deno.serve(handler)`, `Bun.serve({ fetch: handler })`,
 * a Worker's `fetch`, a router, or Node's `http.createServer` through
 * {@linkcode nodeRequestListener}. It answers GET and HEAD on three routes
 * (under `options.path`, if given):
 *
 * - `/livez`: 200 unless an informer is stopped (its `run()` is not
 *   running: not started yet, or ended) or has not been watching for longer
 *   than `staleAfterMs` (its `status.since`): the informer that stopped, or
 *   keeps failing (a 403, a server away, a list that never completes), while
 *   nobody notices. Else 503: a liveness probe that fails restarts the
 *   process. Extra checks count here only when they are `live`.
 * - `/readyz`: 200 when every informer is live and has synced
 *   (`hasSynced()`), and every extra check is ok; else 503.
 * - `/healthz`: the same as `/readyz` (kube-apiserver's old name).
 *
 * What is not judged: `status.lastEventAt`. A watch that delivers no events
 * is healthy (a quiet resource, a server without bookmarks); a watch that
 * silently died (a half-open connection) is ended by the reflector's idle
 * deadline, and then the informer is no longer watching, which is judged.
 *
 * The body is always kube-apiserver's verbose text (`?verbose` is accepted
 * and changes nothing): one line per informer, then per check,
 * `[+]configmaps ok` or `[-]configmaps failed: not watching for 6m12s
 * (waiting: KubeStatusError: ...)`, then `livez check passed` or
 * `readyz check failed`. With `Accept: application/json` the same facts
 * come as a {@linkcode HealthReport}. The body names informers, states,
 * durations and the last error's message, sanitized (no URL query, no
 * credential, no control characters) and cut to 200 characters; the
 * library's error messages carry no secrets in the first place; objects,
 * headers and request URLs are never included. Other paths answer 404,
 * other methods 405 with `Allow: GET, HEAD`. Responses are never cached
 * (`Cache-Control: no-store`).
 *
 * Each probe reads the informers' status and runs the checks: nothing runs
 * between probes, nothing needs stopping.
 *
 * @example Serve liveness and readiness of an informer
 * ```ts
 * import assert from "node:assert/strict";
 * import { healthHandler, Informer, KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const informer = new Informer(lw, { name: "configmaps" });
 * const handler = healthHandler({ informers: [informer] });
 * // Deno.serve({ port: 8080 }, handler), Bun.serve({ port: 8080, fetch: handler }), or
 * // createServer(nodeRequestListener(handler)).listen(8080) on Node
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * await informer.waitForSync();
 * const res = handler(new Request("http://localhost/readyz"));
 * assert.equal(res.status, 200);
 * assert.equal(await res.text(), "[+]configmaps ok\nreadyz check passed\n");
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 *
 * @param options The informers, the staleness, the clock, extra checks, a path prefix.
 * @returns A handler that answers synchronously and never throws.
 * @throws {TypeError | RangeError} when an option is invalid.
 */
export function healthHandler(options: HealthOptions): (request: Request) => Response {
  const resolved = resolveHealthOptions(options);
  const routes = new Map(PROBES.map((p) => [`${resolved.path}/${p}`, p]));
  return (request) => {
    const head = request.method === "HEAD";
    try {
      const probe = routes.get(new URL(request.url).pathname);
      if (probe === undefined) return plain(head, 404, "404 page not found\n");
      if (request.method !== "GET" && !head) {
        return plain(false, 405, "405 method not allowed\n", { allow: ALLOW });
      }
      const report = healthReport(resolved, probe);
      const status = report.ok ? 200 : 503;
      const json = wantsJson(request.headers.get("accept"));
      const body = json ? JSON.stringify(report) + "\n" : healthText(report);
      const type = json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8";
      return new Response(head ? null : body, {
        status,
        headers: { ...HEADERS, "content-type": type, vary: "Accept" },
      });
    } catch {
      // (a clock that throws, a Request without a URL: nothing of it is shown)
      return plain(head, 500, "500 internal error\n");
    }
  };
}

const HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

function plain(
  head: boolean,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(head ? null : body, {
    status,
    headers: { ...HEADERS, "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

/** `Accept` names `application/json` (with a q above 0). */
function wantsJson(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(",").some((part) => {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (type !== "application/json") return false;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
