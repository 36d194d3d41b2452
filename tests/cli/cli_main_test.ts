import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";
import { cliMain } from "../../src/cli/cli_main.ts";
import { fakeEnv } from "./_fake_env.ts";

const noStack = (text: string) => assert.ok(!/\n\s+at /.test(text), `a stack trace in ${text}`);

test("help, --help and COMMAND --help print the help on stdout and exit 0", async () => {
  for (const args of [["help"], ["--help"], ["-h"]]) {
    const env = fakeEnv(args);
    assert.equal(await cliMain(env), 0);
    assert.match(env.out, /^kube-reflector: watch, get and catch up/);
    assert.match(env.out, /Exit codes: 0 ok; 1 failure/);
    assert.equal(env.err, "");
  }
  for (const command of ["watch", "get", "changes", "demo"]) {
    for (const args of [["help", command], [command, "--help"], [command, "-h"]]) {
      const env = fakeEnv(args);
      assert.equal(await cliMain(env), 0, args.join(" "));
      assert.match(env.out, new RegExp(`^Usage: kube-reflector ${command}`), args.join(" "));
    }
  }
});

test("no command, an unknown command, or help of one is a usage error (exit 2)", async () => {
  let env = fakeEnv([]);
  assert.equal(await cliMain(env), 2);
  assert.match(env.err, /^kube-reflector: watch, get/);
  env = fakeEnv(["list", "pods"]);
  assert.equal(await cliMain(env), 2);
  assert.equal(
    env.err,
    "kube-reflector: unknown command \"list\"\nRun 'kube-reflector help' for usage.\n",
  );
  env = fakeEnv(["help", "list"]);
  assert.equal(await cliMain(env), 2);
});

test("bad flags and arguments exit 2 with the message and a pointer to --help", async () => {
  const cases: [string[], string][] = [
    [["get", "cm", "--bogus"], "unknown flag: --bogus"],
    [["get", "cm", "-x"], "unknown flag: -x"],
    [["get", "cm", "-n"], "flag needs an argument: -n"],
    [["get"], "missing RESOURCE (e.g. pods, deploy, configmaps)"],
    [["get", "cm", "a", "b"], "unexpected argument: b"],
    [
      ["get", "cm", "-o", "yaml"],
      'unknown output format "yaml": use one of table, wide, json, ndjson, name',
    ],
    [["watch", "cm", "-A=maybe"], '-A takes no value, or =true or =false (got "maybe")'],
    [["watch", "cm", "--metrics-port", "http"], '--metrics-port: not a port number: "http"'],
    [
      ["get", "cm", "--server", "http://x", "--context", "dev"],
      "--server excludes --kubeconfig and --context",
    ],
    [["get", "cm", "--server", "not a url"], '--server: not a URL: "not a url"'],
    [
      ["changes", "cm", "--server", "http://x"],
      "missing --state DIR (where the checkpoint is kept)",
    ],
  ];
  for (const [args, message] of cases) {
    const env = fakeEnv(args);
    assert.equal(await cliMain(env), 2, args.join(" "));
    assert.equal(
      env.err,
      `kube-reflector: ${message}\nRun 'kube-reflector ${args[0]} --help' for usage.\n`,
    );
    assert.equal(env.out, "");
  }
});

test("an unknown resource exits 3 with the closest names; a verb the resource does not serve exits 3", async () => {
  const server = await FakeApiServer.start({
    resources: [{
      group: "",
      version: "v1",
      resource: "bindings",
      kind: "Binding",
      namespaced: true,
      verbs: ["create"],
    }],
  });
  try {
    for (const command of ["get", "watch", "changes"]) {
      const state = command === "changes" ? ["--state", "unused"] : [];
      const env = fakeEnv([command, "deplyo", ...state, "--server", server.url]);
      assert.equal(await cliMain(env), 3, command);
      assert.equal(
        env.err,
        'kube-reflector: the server doesn\'t have a resource type "deplyo" (did you mean deploy, deployments?)\n',
      );
    }
    for (const [command, verb] of [["get", "list"], ["watch", "watch"], ["changes", "watch"]]) {
      const state = command === "changes" ? ["--state", "unused"] : [];
      const env = fakeEnv([command, "bindings", ...state, "--server", server.url]);
      assert.equal(await cliMain(env), 3, command);
      assert.match(
        env.err,
        new RegExp(
          `^kube-reflector: the server does not allow "${verb}" on .*bindings.*: its verbs are create\\n$`,
        ),
      );
    }
  } finally {
    await server.close();
  }
});

test("an unreachable server or a missing kubeconfig exits 1 with one line, no stack", async () => {
  const server = await FakeApiServer.start();
  const url = server.url;
  await server.close();
  let env = fakeEnv(["get", "cm", "--server", url]);
  assert.equal(await cliMain(env), 1);
  assert.match(env.err, /^kube-reflector: .*network error/);
  assert.equal(env.err.split("\n").length, 2, env.err);
  noStack(env.err);

  env = fakeEnv(["get", "cm", "--kubeconfig", "/nonexistent/kubeconfig"]);
  assert.equal(await cliMain(env), 1);
  assert.match(env.err, /^kube-reflector: cannot load the kubeconfig: .*\/nonexistent\/kubeconfig/);
  noStack(env.err);

  // in a pod: the service account (here: no token file, so a clear failure)
  env = fakeEnv(["get", "cm"], {
    vars: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
  });
  assert.equal(await cliMain(env), 1);
  assert.match(env.err, /^kube-reflector: cannot load the in-cluster configuration: /);
});

test("Ctrl-C: a get or changes interrupted exits 130; a watch ended by it exits 0", async () => {
  const server = await FakeApiServer.start();
  try {
    server.inject({
      resource: "configmaps",
      verb: "list",
      times: Infinity,
      fault: { kind: "stall" },
    });
    let env = fakeEnv(["get", "cm", "--server", server.url]);
    let done = cliMain(env);
    await server.waitForRequests((r) => r.path.endsWith("/configmaps"));
    env.interrupt();
    assert.equal(await done, 130);
    assert.equal(env.out, "");
    assert.equal(env.err, "");

    let since = server.requests.at(-1)!.seq;
    const dir = await mkdtemp(join(tmpdir(), "cli-interrupt-"));
    try {
      env = fakeEnv(["changes", "cm", "--state", dir, "--server", server.url]);
      done = cliMain(env);
      await server.waitForRequests((r) => r.path.endsWith("/configmaps"), { since });
      env.interrupt();
      assert.equal(await done, 130);
      assert.equal(env.out, "");
      assert.equal(env.err, "");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    since = server.requests.at(-1)!.seq;
    env = fakeEnv(["watch", "cm", "--server", server.url]);
    done = cliMain(env);
    await server.waitForRequests((r) => r.path.endsWith("/configmaps"), { since });
    env.interrupt();
    assert.equal(await done, 0);
    assert.equal(env.out, "");
    assert.equal(env.err, "");
  } finally {
    await server.close();
  }
});
