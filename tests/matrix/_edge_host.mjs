#!/usr/bin/env node
// Hosts the runtime matrix's edge bundle in Vercel's edge-runtime
// (devDependency edge-runtime, its EdgeRuntime + runServer API), in a child
// process of scripts/runtime_matrix.mjs:
//   node tests/matrix/_edge_host.mjs BUNDLE.js '{"control": URL, ...}'
// POSTs the arguments to the edge server, prints its JSON answer on stdout.
import { readFileSync } from "node:fs";
import { EdgeRuntime, runServer } from "edge-runtime";

const [bundle, body] = process.argv.slice(2);
const runtime = new EdgeRuntime({ initialCode: readFileSync(bundle, "utf8") });
const server = await runServer({ runtime, host: "127.0.0.1", port: 0 });
try {
  const res = await fetch(server.url, { method: "POST", body });
  const text = await res.text();
  if (!res.ok) throw new Error(`edge-runtime answered ${res.status}: ${text}`);
  process.stdout.write(`${text}\n`);
} finally {
  await server.close();
}
