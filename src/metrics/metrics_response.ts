/**
 * Serving a registry on `/metrics` with web-standard `Response`s.
 *
 * @module
 */
import type { PromRegistryLike } from "./prom_client_like.ts";

/**
 * The Prometheus scrape of `registry` as a `Response`, for any server built
 * on web `Request`/`Response` (`Deno.serve`, Bun, Cloudflare Workers, Hono,
 * Node's `http` through an adapter).
 */
export async function metricsResponse(registry: PromRegistryLike): Promise<Response> {
  const body = await registry.metrics();
  return new Response(body, { headers: { "content-type": registry.contentType } });
}
