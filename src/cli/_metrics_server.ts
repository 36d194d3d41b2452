/**
 * `--metrics-port`: the informer's Prometheus metrics through prom-client
 * (`npm:prom-client` on Deno, the installed package on Node), served on
 * `http://127.0.0.1:PORT/metrics` (Deno.serve on Deno, node:http on Node).
 * This file only runs on the command line's path.
 *
 * @module
 */
import type { PromClientLike, PromRegistryLike } from "../metrics/prom_client_like.ts";
import { metricsResponse } from "../metrics/metrics_response.ts";
import { nodeRequestListener } from "../health/node_request_listener.ts";

/** prom-client's module, as the metrics entry point takes it. */
export interface PromClientModule extends PromClientLike {
  Registry: new () => PromRegistryLike;
}

/** Thrown when prom-client cannot be loaded (exit code 2: install it). */
export class PromClientMissingError extends Error {
  /** Creates the error. */
  constructor(cause: unknown) {
    super(
      "--metrics-port needs the prom-client package, which cannot be loaded " +
        `(${cause instanceof Error ? cause.message : String(cause)}): ` +
        "on Node run `npm install prom-client`; on Deno allow npm packages (it loads npm:prom-client)",
      { cause },
    );
    this.name = "PromClientMissingError";
  }
}

// deno-lint-ignore no-import-prefix
const importPromClient = () => import("npm:prom-client@^15");

/** Loads prom-client (the build rewrites `npm:prom-client@^15` to `prom-client` for Node). */
export async function loadPromClient(
  importer: () => Promise<unknown> = importPromClient,
): Promise<PromClientModule> {
  try {
    // deno-lint-ignore no-explicit-any
    const mod: any = await importer();
    return (mod.Registry ? mod : mod.default) as PromClientModule;
  } catch (err) {
    throw new PromClientMissingError(err);
  }
}

/** A running metrics server. */
export interface MetricsServer {
  /** `http://127.0.0.1:PORT/metrics`. */
  url: string;
  /** Stops serving. */
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
const deno = (globalThis as any).Deno;

/** True for "address already in use" (Deno's `AddrInUse`, Node's `EADDRINUSE`). */
function isAddrInUse(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null;
  return e?.name === "AddrInUse" || e?.code === "EADDRINUSE";
}

/**
 * Serves `registry` on 127.0.0.1:`port` (0: any free port) at `/metrics`;
 * a port in use rejects with `--metrics-port PORT: address already in use`.
 */
export async function serveMetrics(
  port: number,
  registry: PromRegistryLike,
): Promise<MetricsServer> {
  try {
    return await listen(port, registry);
  } catch (err) {
    if (isAddrInUse(err)) {
      throw new Error(`--metrics-port ${port}: address already in use`, { cause: err });
    }
    throw err;
  }
}

async function listen(port: number, registry: PromRegistryLike): Promise<MetricsServer> {
  const handler = (req: Request) =>
    new URL(req.url).pathname === "/metrics"
      ? metricsResponse(registry)
      : new Response("not found: try /metrics\n", { status: 404 });
  if (deno?.serve) {
    let server: { shutdown(): Promise<void> } | undefined;
    const bound = await new Promise<number>((resolve) => {
      server = deno.serve({
        port,
        hostname: "127.0.0.1",
        onListen: (addr: { port: number }) => resolve(addr.port),
      }, handler);
    });
    return {
      url: `http://127.0.0.1:${bound}/metrics`,
      close: async () => {
        await server!.shutdown();
      },
    };
  }
  const http = await import("node:http");
  const server = http.createServer(nodeRequestListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
