import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { runtime, test } from "../_test.ts";
import { kubeconfig, toYaml } from "./_helpers.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs a Deno program with `permissions`; resolves with its stdout (or rejects with its stderr). */
function denoRun(
  script: string,
  permissions: string[],
  env: Record<string, string>,
): Promise<string> {
  // deno-lint-ignore no-explicit-any
  const deno = (globalThis as any).Deno;
  const args = ["run", "--quiet", "--no-prompt", "--config", join(ROOT, "deno.json")];
  return new Promise((resolve, reject) => {
    execFile(
      deno.execPath(),
      [...args, ...permissions, script],
      {
        env: {
          PATH: process.env.PATH ?? "",
          // the parent's module cache: HOME is the test's, not the user's
          DENO_DIR: process.env.DENO_DIR ?? join(homedir(), ".cache", "deno"),
          NO_COLOR: "1",
          ...env,
        },
        timeout: 60_000,
      },
      (
        err,
        stdout,
        stderr,
      ) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

if (runtime === "deno") {
  test("Deno with --allow-env=KUBECONFIG,HOME and read access to the files only loads a kubeconfig", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kube-reflector-scoped-"));
    try {
      await mkdir(join(dir, "home", ".kube"), { recursive: true });
      const config = (port: number, namespace: string) =>
        toYaml(kubeconfig({ server: `http://127.0.0.1:${port}` }, { token: "t" }, { namespace }));
      await writeFile(join(dir, "home", ".kube", "config"), config(7001, "from-home"));
      await writeFile(join(dir, "listed.yaml"), config(7002, "from-kubeconfig"));
      const script = join(dir, "print_server.ts");
      await writeFile(
        script,
        `import { loadKubeConfig } from ${
          JSON.stringify(new URL("../../kubeconfig.ts", import.meta.url).href)
        };
try {
  const conn = await loadKubeConfig();
  console.log(JSON.stringify({ server: conn.client.server.href, namespace: conn.namespace }));
  await conn.close();
} catch (err) {
  console.log(JSON.stringify({ error: err.name, message: err.message }));
}
`,
      );
      const home = join(dir, "home");
      const scoped = ["--allow-env=KUBECONFIG,HOME", `--allow-read=${dir}`];
      const run = async (permissions: string[], env: Record<string, string>) =>
        JSON.parse(await denoRun(script, permissions, env));

      assert.deepEqual(await run(scoped, { HOME: home }), {
        server: "http://127.0.0.1:7001/",
        namespace: "from-home",
      });
      assert.deepEqual(await run(scoped, { HOME: home, KUBECONFIG: join(dir, "listed.yaml") }), {
        server: "http://127.0.0.1:7002/",
        namespace: "from-kubeconfig",
      });
      // HOME's read refused: a KubeConfigError naming the flag, not a NotCapable crash.
      const denied = await run(["--allow-env=KUBECONFIG", `--allow-read=${dir}`], { HOME: home });
      assert.equal(denied.error, "KubeConfigError");
      assert.match(denied.message, /cannot be read: run Deno with --allow-env=KUBECONFIG,HOME/);
      // a file's read refused: the message names --allow-read and the path
      const unreadable = await run(["--allow-env=KUBECONFIG,HOME"], { HOME: home });
      assert.equal(unreadable.error, "KubeConfigError");
      assert.ok(
        unreadable.message.includes(`run Deno with --allow-read=${join(home, ".kube/config")}`),
        unreadable.message,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

test("processEnv reads variables one at a time, and enumerates them where access is whole", async () => {
  const { processEnv } = await import("../../src/kubeconfig/_runtime.ts");
  const env = processEnv();
  assert.equal(env.PATH, process.env.PATH);
  assert.equal(env.KUBE_REFLECTOR_SURELY_UNSET_VARIABLE, undefined);
  assert.equal("PATH" in env, process.env.PATH !== undefined);
  assert.ok(Object.keys(env).includes("PATH"), "the tests run with full env access");
  assert.equal(Object.fromEntries(Object.entries(env)).PATH, process.env.PATH);
});
