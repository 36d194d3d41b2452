// How the runtime matrix (scripts/runtime_matrix.mjs) starts each runtime
// against one session (see _control.mjs) and gets its results back:
// processes (Node, Bun, Deno) post them to the control endpoint and must
// then exit on their own; workerd and edge-runtime answer an HTTP request.
import { spawn, spawnSync } from "node:child_process";
import { createReadStream, existsSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { extname, join, normalize, relative, sep } from "node:path";

const RUN_TIMEOUT_MS = 60_000;
const EXIT_GRACE_MS = 5_000;
const tail = (text, n = 30) => text.trimEnd().split("\n").slice(-n).join("\n");

/** Spawns `cmd`; resolves { code, output } when it exits (or kills it after `timeoutMs`). */
function start(cmd, argv, options) {
  const child = spawn(cmd, argv, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise((resolve) => {
    child.once("error", (err) => resolve({ code: `spawn error ${err.message}`, output }));
    child.once("exit", (code, signal) => resolve({ code: code ?? signal, output }));
  });
  return { child, exited, output: () => output };
}

const timer = (ms, value) => {
  let t;
  const p = new Promise((r) => (t = setTimeout(() => r(value), ms)));
  return { p, cancel: () => clearTimeout(t) };
};

/**
 * Runs a process that posts its results to `session` and must then exit by
 * itself within 5 s (else the abort check fails: something was left pending).
 */
export async function runProcess(session, cmd, argv, options) {
  const proc = start(cmd, argv, options);
  const deadline = timer(RUN_TIMEOUT_MS, "timeout");
  const first = await Promise.race([
    session.result.then((r) => ({ result: r })),
    proc.exited.then((e) => ({ exit: e })),
    deadline.p,
  ]);
  deadline.cancel();
  if (first === "timeout") {
    proc.child.kill("SIGKILL");
    await proc.exited;
    throw new Error(`no results after ${RUN_TIMEOUT_MS / 1000} s:\n${tail(proc.output())}`);
  }
  if (first.exit) {
    // It may have posted its results just before exiting.
    const late = await Promise.race([session.result, timer(200, undefined).p]);
    if (!late) {
      throw new Error(`exited (${first.exit.code}) without results:\n${tail(first.exit.output)}`);
    }
    first.result = late;
  }
  const grace = timer(EXIT_GRACE_MS, "running");
  const exit = await Promise.race([proc.exited, grace.p]);
  grace.cancel();
  const { results } = first.result;
  if (exit === "running") {
    proc.child.kill("SIGKILL");
    await proc.exited;
    const abort = results.find((r) => r.name === "abort");
    if (abort) {
      abort.status = "fail";
      abort.note = `the process did not exit within ${EXIT_GRACE_MS / 1000} s of its last check ` +
        `(a timer or socket was left pending)`;
    }
  } else if (exit.code !== 0) {
    results.push({
      name: "setup",
      status: "fail",
      note: `exit ${exit.code}:\n${tail(exit.output)}`,
    });
  }
  return { version: first.result.version, results, output: proc.output() };
}

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Serves the repository's TypeScript sources (mod.ts, kubeconfig.ts,
 * src/**) over loopback HTTP, as a Deno user's URL import would fetch them.
 */
export async function serveSources(root) {
  const server = createServer((req, res) => {
    res.setHeader("connection", "close");
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).slice(1);
    const file = join(root, path);
    const inside = !relative(root, file).startsWith("..") && !path.startsWith(`..${sep}`);
    const allowed = inside && extname(file) === ".ts" &&
      (path.startsWith(`src${sep}`) || !path.includes(sep));
    if (!allowed || !existsSync(file) || !statSync(file).isFile()) {
      res.statusCode = 404;
      res.end("not found");
      return;
    }
    res.setHeader("content-type", "application/typescript; charset=utf-8");
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    port: server.address().port,
    close: () => new Promise((r) => server.close(r)),
  };
}

/**
 * Bundles `entry` (in `project`) with esbuild as a user's bundler would; when
 * the kubeconfig entry point does not bundle, bundles again with it replaced
 * by an empty module and returns the first build's error as `kubeconfigError`.
 */
export function bundle(esbuild, project, entry, outfile, kubeconfigEntry, flags) {
  const build = (extra) =>
    spawnSync(
      esbuild,
      [
        entry,
        "--bundle",
        `--outfile=${outfile}`,
        "--log-level=error",
        "--color=false",
        ...flags,
        ...extra,
      ],
      { cwd: project, encoding: "utf8" },
    );
  let r = build(["--log-limit=0"]);
  let kubeconfigError;
  if (r.status !== 0) {
    // One line: how many errors, and the first (its message and where).
    const all = r.stderr ?? "";
    const count = all.match(/\[ERROR\]/g)?.length ?? 0;
    const first = /\[ERROR\] (.*)\n\s*\n\s*(\S+?):\d/.exec(all);
    kubeconfigError =
      `esbuild (${flags.join(" ")}) cannot bundle ${kubeconfigEntry}: ${count} error(s), ` +
      (first ? `the first: ${first[1]} in ${first[2]}` : tail(r.stderr, 8));
    r = build([`--alias:${kubeconfigEntry}=./_no_kubeconfig.mjs`]);
    if (r.status !== 0) throw new Error(`esbuild ${flags.join(" ")} failed:\n${tail(r.stderr)}`);
  }
  return { kubeconfigError, bytes: statSync(outfile).size };
}

/** Runs the bundled worker on workerd (no compatibility flags); resolves with its answer. */
export async function runWorkerd(workerd, dir, script, body) {
  const version = /workerd (\d{4}-\d{2}-\d{2})/.exec(
    spawnSync(workerd, ["--version"], { encoding: "utf8" }).stdout ?? "",
  )?.[1];
  if (!version) throw new Error(`${workerd} --version failed`);
  for (let attempt = 1;; attempt++) {
    const port = await freePort();
    const config = join(dir, "matrix.capnp");
    writeFileSync(
      config,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "matrix", worker = .matrixWorker),
    # workerd's default outbound blocks local addresses; the driver is on 127.0.0.1.
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "matrix")],
);
const matrixWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed ${JSON.stringify(script)})],
  compatibilityDate = "${version}",
  globalOutbound = "loopback",
);
`,
    );
    const proc = start(workerd, ["serve", config], { cwd: dir });
    try {
      const url = `http://127.0.0.1:${port}`;
      const begin = Date.now();
      let up = false;
      while (!up) {
        const gone = await Promise.race([proc.exited, timer(50, undefined).p]);
        if (gone) {
          if (attempt < 3 && /address.*in use/i.test(gone.output)) break;
          throw new Error(`workerd exited (${gone.code}):\n${tail(gone.output)}`);
        }
        up = await fetch(url).then((r) => r.body?.cancel().then(() => true), () => false);
        if (!up && Date.now() - begin > 15_000) {
          throw new Error(`workerd did not answer:\n${tail(proc.output())}`);
        }
      }
      if (!up) continue;
      const res = await fetch(url, {
        method: "POST",
        body,
        signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
      });
      const text = await res.text();
      if (!res.ok) {
        throw new Error(`workerd answered ${res.status}: ${text}\n${tail(proc.output())}`);
      }
      return { version, ...JSON.parse(text) };
    } finally {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill("SIGTERM");
        const t = setTimeout(() => proc.child.kill("SIGKILL"), 2_000);
        await proc.exited;
        clearTimeout(t);
      }
    }
  }
}

/** Runs the bundled script on Vercel's edge-runtime, in a child Node process (_edge_host.mjs). */
export async function runEdgeRuntime(host, script, body) {
  const proc = start(process.execPath, [host, script, body], {});
  const deadline = timer(RUN_TIMEOUT_MS, "timeout");
  const exit = await Promise.race([proc.exited, deadline.p]);
  deadline.cancel();
  if (exit === "timeout") {
    proc.child.kill("SIGKILL");
    await proc.exited;
    throw new Error(`no answer after ${RUN_TIMEOUT_MS / 1000} s:\n${tail(proc.output())}`);
  }
  const line = exit.output.trimEnd().split("\n").findLast((l) => l.startsWith("{"));
  if (exit.code !== 0 || !line) throw new Error(`exit ${exit.code}:\n${tail(exit.output)}`);
  return JSON.parse(line);
}
