// The runtime matrix's entry on Node, Bun and Deno (scripts/runtime_matrix.mjs
// copies it into the temporary consumer project beside _conformance.mjs):
//   node|bun _runner.mjs '{"control": URL, "tls": {...}}'           → the installed package
//   deno run --no-config ... _runner.mjs '{"base": URL, ...}'        → mod.ts by URL
// Runs the conformance checks and posts them to the driver (op "result"),
// then returns: the process must exit on its own (nothing left pending).
import { conformance } from "./_conformance.mjs";

const args = JSON.parse(globalThis.Deno ? Deno.args[0] : process.argv[2]);
const runtime = globalThis.Deno ? "deno" : globalThis.Bun ? "bun" : "node";
const version = globalThis.Deno
  ? Deno.version.deno
  : globalThis.Bun
  ? Bun.version
  : process.versions.node;

// What a user writes: the package by name, or mod.ts by URL on Deno.
const lib = args.base ? await import(`${args.base}/mod.ts`) : await import("kube-reflector");
const kubeconfig =
  await (args.base ? import(`${args.base}/kubeconfig.ts`) : import("kube-reflector/kubeconfig"))
    .catch((err) => err);

let results;
try {
  results = await conformance({ lib, kubeconfig, control: args.control, tls: args.tls, runtime });
} catch (err) {
  results = [{ name: "setup", status: "fail", note: String(err?.stack ?? err) }];
}
const res = await fetch(args.control, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ op: "result", runtime, version, results }),
});
await res.body?.cancel();
