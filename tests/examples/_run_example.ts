/**
 * Runs examples/serverless_catch_up as a separate process, as a scheduler would.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

// Deno runs examples/serverless_catch_up.ts, Node the npm build's .js next to this test's build.
const ts = import.meta.url.endsWith(".ts");
const script = fileURLToPath(
  new URL(`../../examples/serverless_catch_up.${ts ? "ts" : "js"}`, import.meta.url),
);
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** Runs the example once; resolves with its exit code, its change lines and its summary. */
export function runExample(
  args: string[],
): Promise<{ code: number | null; lines: string[]; summary: Record<string, unknown> }> {
  const [cmd, argv] = deno
    ? [deno.execPath(), ["run", "-A", script, ...args]]
    : [process.execPath, [script, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const lines = out.trim().split("\n");
      const last = lines.pop() ?? "";
      if (!last.startsWith("summary: ")) {
        reject(new Error(`no summary (exit ${code}): ${out}\n${err}`));
        return;
      }
      resolve({ code, lines, summary: JSON.parse(last.slice(9)) });
    });
  });
}
