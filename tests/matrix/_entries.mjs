// The entry modules the runtime matrix (scripts/runtime_matrix.mjs) writes
// into the temporary consumer project and bundles with esbuild there, as a
// Workers or edge user's bundler would. They are texts here, not files,
// because they import the package by name ("kube-reflector"), which resolves
// only inside that project (a file here would break `deno check tests/`).
// POST / with {"control": URL, "tls": {...}, "kubeconfigError"?: text} runs
// the conformance checks inside that one request (workerd ties I/O to the
// request that started it) and answers with their results as JSON.

const common = (runtime, kubeconfigEntry) => `
import * as lib from "kube-reflector";
import * as kubeconfigModule from ${JSON.stringify(kubeconfigEntry)};
import { conformance } from "./_conformance.mjs";

async function answer(request) {
  if (request.method !== "POST") return new Response("ok");
  const args = await request.json();
  const kubeconfig = args.kubeconfigError ? new Error(args.kubeconfigError) : kubeconfigModule;
  const results = await conformance({
    lib,
    kubeconfig,
    control: args.control,
    tls: args.tls,
    runtime: ${JSON.stringify(runtime)},
  }).catch((err) => [{ name: "setup", status: "fail", note: String(err?.stack ?? err) }]);
  return new Response(JSON.stringify({ runtime: ${JSON.stringify(runtime)}, results }), {
    headers: { "content-type": "application/json" },
  });
}
`;

/**
 * workerd: an ES module worker (bundled with --format=esm --platform=neutral);
 * `kubeconfigEntry` is the package's edge-safe kubeconfig entry point.
 */
export const workerEntry = (kubeconfigEntry) =>
  `${common("workerd", kubeconfigEntry)}
export default { fetch: answer };
`;

/** Vercel's edge-runtime: a fetch listener (bundled with --format=iife --platform=browser). */
export const edgeEntry = (kubeconfigEntry) =>
  `${common("edge-runtime", kubeconfigEntry)}
addEventListener("fetch", (event) => event.respondWith(answer(event.request)));
`;
