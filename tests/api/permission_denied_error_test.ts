import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { PermissionDeniedError } from "../../src/api/permission_denied_error.ts";
import { failureKind } from "../../src/reflector/_failure_kind.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";

const refusing = (err: Error) =>
  new KubeClient({
    server: "https://k8s.example.com:6443",
    token: "s3cret",
    fetch: () => Promise.reject(err),
  });

test("a runtime's permission refusal (Deno's NotCapable, PermissionDenied) is a PermissionDeniedError naming the flag, retried at the backoff's pace; other fetch failures stay network errors", async () => {
  for (const name of ["NotCapable", "PermissionDenied"]) {
    const err = await refusing(Object.assign(new Error("Requires net access"), { name }))
      .requestJson("/api/v1/pods").catch((e) => e);
    assert.ok(err instanceof PermissionDeniedError, name);
    assert.equal(err.permission, "net");
    assert.equal(err.target, "k8s.example.com:6443");
    assert.equal(err.flag, "--allow-net=k8s.example.com:6443");
    assert.match(
      err.message,
      /^GET \/api\/v1\/pods: the runtime denied net access to k8s\.example\.com:6443; run Deno with --allow-net=k8s\.example\.com:6443/,
    );
    assert.ok(!err.message.includes("s3cret"));
    assert.equal(failureKind(err), "answered", "not the fast reconnect of a dropped connection");
  }
  const reset = await refusing(new TypeError("connection reset")).requestJson("/api/v1/pods").catch(
    (e) => e,
  );
  assert.ok(reset instanceof KubeNetworkError);
  assert.equal(failureKind(reset), "no-answer");
});

const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
if (deno) {
  test("on Deno without --allow-net a request fails with a PermissionDeniedError naming --allow-net=host:port", async () => {
    const mod = JSON.stringify(new URL("../../mod.ts", import.meta.url).href);
    const code = `import { KubeClient } from ${mod};
const err = await new KubeClient({ server: "http://127.0.0.1:6443" }).requestJson("/version").catch((e) => e);
console.log(JSON.stringify({ name: err.name, flag: err.flag, message: err.message }));`;
    // Deno.Command, not node:child_process (whose spawn of Deno itself passes the parent's permissions on)
    type Command = new (cmd: string, o: { args: string[]; stdin: "piped"; stdout: "piped" }) => {
      spawn(): { stdin: WritableStream<Uint8Array>; output(): Promise<{ stdout: Uint8Array }> };
    };
    const Cmd = (globalThis as unknown as { Deno: { Command: Command } }).Deno.Command;
    const child = new Cmd(deno.execPath(), {
      args: ["run", "--no-prompt", "--no-config", "-"],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(code));
    await writer.close();
    const out = new TextDecoder().decode((await child.output()).stdout);
    const got = JSON.parse(out);
    assert.deepEqual({ name: got.name, flag: got.flag }, {
      name: "PermissionDeniedError",
      flag: "--allow-net=127.0.0.1:6443",
    }, got.message);
  });
}
