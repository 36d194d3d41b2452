/**
 * The real program, spawned: `deno run -A cli.ts ...` on Deno, the npm
 * package's bin (`node npm/esm/cli.js ...`) on Node: exit codes, output,
 * errors as one line without a stack trace, Ctrl-C (SIGINT) ending a
 * watch with 0.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runtime, test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const program = fileURLToPath(
  new URL(runtime === "deno" ? "../../cli.ts" : "../../cli.js", import.meta.url),
);
const command = runtime === "deno"
  ? [g.Deno.execPath(), ["run", "-A", "--no-check", program]] as const
  : [g.process.execPath, [program]] as const;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the program; `onStdout` sees the output so far and may send it SIGINT. */
function run(
  args: string[],
  onStdout?: (text: string, interrupt: () => void) => void,
): Promise<Ran> {
  // Deno's node:child_process reports a child sent a signal as killed by it even when the
  // child handled it and exited 0: on Deno, Deno.Command tells the real status.
  return runtime === "deno" ? runDeno(args, onStdout) : runNode(args, onStdout);
}

async function runDeno(
  args: string[],
  onStdout?: (text: string, interrupt: () => void) => void,
): Promise<Ran> {
  const child = new g.Deno.Command(command[0], {
    args: [...command[1], ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const decoder = new TextDecoder();
  const read = async (stream: ReadableStream<Uint8Array>, onText?: (text: string) => void) => {
    let text = "";
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      onText?.(text);
    }
    return text;
  };
  const [stdout, stderr, status] = await Promise.all([
    read(child.stdout, (text) => onStdout?.(text, () => child.kill("SIGINT"))),
    read(child.stderr),
    child.status,
  ]);
  return { code: status.code, stdout, stderr };
}

function runNode(
  args: string[],
  onStdout?: (text: string, interrupt: () => void) => void,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], [...command[1], ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...g.process.env, NO_COLOR: "1" },
    });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d: Uint8Array) => {
      stdout += d;
      onStdout?.(stdout, () => child.kill("SIGINT"));
    });
    child.stderr.on("data", (d: Uint8Array) => (stderr += d));
    child.on("error", reject);
    child.on(
      "close",
      (code, signal) => resolve({ code: code ?? -1, stdout, stderr: stderr + (signal ?? "") }),
    );
  });
}

const noStack = (r: Ran) => assert.ok(!/\n\s+at /.test(r.stderr), `a stack trace: ${r.stderr}`);

test("the program exits 0/1/2/3 as documented, with one-line errors and no stack trace", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "default" },
    });

    let r = await run(["get", "configmaps", "-o", "name", "--server", server.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "configmap/a\n");

    r = await run(["get", "configmapz", "--server", server.url]);
    assert.equal(r.code, 3);
    assert.match(
      r.stderr,
      /^kube-reflector: the server doesn't have a resource type "configmapz" \(did you mean /,
    );
    assert.equal(r.stderr.split("\n").length, 2);
    noStack(r);

    r = await run(["get", "cm", "--output=yaml", "--server", server.url]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^kube-reflector: unknown output format "yaml"/);
    noStack(r);

    r = await run(["watch", "cm", "-o", "name", "--server", server.url], (out, interrupt) => {
      if (out === "configmap/a\n") interrupt();
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "configmap/a\n");

    r = await run(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^kube-reflector: watch, get and catch up/);
  } finally {
    await server.close();
  }
  const r = await run(["get", "cm", "--server", server.url]); // closed now
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^kube-reflector: .*network error/);
  noStack(r);
});

/** Runs the program with its stdout closed from the start (a reader that went away). */
async function runStdoutClosed(args: string[]): Promise<Ran> {
  if (runtime === "deno") {
    const child = new g.Deno.Command(command[0], {
      args: [...command[1], ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    await child.stdout.cancel(); // closes the pipe's read end
    const [stderr, status] = await Promise.all([
      new Response(child.stderr).text(),
      child.status,
    ]);
    return { code: status.code, stdout: "", stderr };
  }
  return await new Promise((resolve, reject) => {
    const child = spawn(command[0], [...command[1], ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...g.process.env, NO_COLOR: "1" },
    });
    child.stdout.destroy(); // closes the pipe's read end
    let stderr = "";
    child.stderr.on("data", (d: Uint8Array) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout: "", stderr }));
  });
}

test("changes with its stdout closed exits 1 and keeps the checkpoint; the next run prints those changes", async () => {
  const server = await FakeApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), "cli-program-"));
  try {
    const cm = (name: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "app" },
    });
    const args = ["changes", "cm", "-n", "app", "--state", dir, "--server", server.url];
    server.create(cm("a"));
    let r = await run(args);
    assert.equal(r.code, 0, r.stderr);
    server.create(cm("b"));
    r = await runStdoutClosed(args);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^kube-reflector: stdout closed before every change was written; the checkpoint was not advanced/m,
    );
    noStack(r);
    r = await run(args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\{"type":"ADDED","object":\{.*"name":"b"/);
    assert.equal(r.stdout.split("\n").length, 2, "b alone");
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
});
