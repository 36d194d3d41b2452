/**
 * The `demo` command, run in-process with a fake CliEnv. The runs use a
 * manual clock for everything the demo times (churn, faults, status,
 * duration, the reflector's deadlines and backoffs), moved on in small
 * steps while the real network between the reflector and the test API
 * server does its work; the assertions are about outcomes (exit codes,
 * store = server, faults that took effect, what is printed), never about
 * how long anything took.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { ManualClock } from "../../testkit.ts";
import type { CliEnv } from "../../src/cli/cli_env.ts";
import { demo, demoCommand } from "../../src/cli/demo.ts";
import type { DemoInternals } from "../../src/cli/_demo_run.ts";
import type { FakeApiServer } from "../../src/testkit/fake_api_server.ts";

interface FakeEnv {
  env: CliEnv;
  out: () => string;
  err: () => string;
  abort: () => void;
}

function fakeEnv(
  args: string[],
  terminal: { stdout?: boolean; stderr?: boolean } = {},
  vars: Record<string, string> = {},
): FakeEnv {
  let out = "";
  let err = "";
  const ac = new AbortController();
  return {
    env: {
      args,
      stdout: (text) => void (out += text),
      stderr: (text) => void (err += text),
      stdoutIsTerminal: terminal.stdout ?? false,
      stderrIsTerminal: terminal.stderr ?? false,
      env: (name) => vars[name],
      signal: ac.signal,
    },
    out: () => out,
    err: () => err,
    abort: () => ac.abort(),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the demo on a manual clock, moving it on by 25 ms at a time with a
 * little real time between steps, until the demo ends (it always does: its
 * catch-up is bounded in clock time, and the clock never stops).
 * `atMs(ms)` is called once fake time has passed `ms` (for a Ctrl-C).
 */
async function runOnClock(
  fake: FakeEnv,
  internals: DemoInternals = {},
  at?: { ms: number; then: () => void },
): Promise<number> {
  const clock = new ManualClock(1_000_000);
  let settled = false;
  const run = demoCommand(fake.env, { clock, catchUpTimeoutMs: 600_000, ...internals })
    .finally(() => void (settled = true));
  let fired = false;
  while (!settled) {
    await clock.advance(25);
    await sleep(2);
    if (at && !fired && clock.now() - 1_000_000 >= at.ms) {
      fired = true;
      at.then();
    }
  }
  return await run;
}

/** The summary's rows by name (`"faults" -> "7: reset 2, ..."`). */
function summaryRows(out: string): Map<string, string> {
  const start = out.indexOf("summary:\n");
  assert.ok(start >= 0, `no summary in:\n${out}`);
  const rows = new Map<string, string>();
  for (const line of out.slice(start).split("\n").slice(1)) {
    const m = /^ {2}(\S+)\s+(.*)$/.exec(line);
    if (m) rows.set(m[1], m[2]);
  }
  return rows;
}

/** The leading number of a tally (`"7: reset 2"` -> 7). */
const total = (text: string | undefined) => Number(/^\d+/.exec(text ?? "")?.[0] ?? NaN);

test("demo: churn and a fault every 200 ms for 4 s, then store = server (exit 0), plain lines without a terminal", async () => {
  const fake = fakeEnv([
    "--objects",
    "60",
    "--namespaces",
    "3",
    "--rate",
    "400",
    "--duration",
    "4s",
    "--fault-every",
    "200ms",
    "--seed",
    "11",
  ]);
  let server: FakeApiServer | undefined;
  const code = await runOnClock(fake, { server: (s) => (server = s) });
  const out = fake.out();
  assert.equal(code, 0, `${out}\n${fake.err()}`);
  assert.equal(fake.err(), "");
  assert.match(
    out,
    /^kube-reflector demo: the embedded test API server on http:\/\/127\.0\.0\.1:\d+, 60 ConfigMaps in 3 namespace\(s\), 400 writes\/s, a fault every 0\.2s, seed 11; for 4\.0s\n/,
  );
  assert.match(
    out,
    /\nsynced 60 objects at resourceVersion \d+ in \d+\.\ds; churn and faults start\n/,
  );
  assert.match(
    out,
    /\ntime is up: churn and faults stop; waiting for the store to reach resourceVersion \d+\n/,
  );
  assert.match(
    out,
    /\ncheck: store = server \(\d+ objects, each at the server's resourceVersion\)\n$/,
  );
  // No terminal: no control characters, and plain progress lines (every 3 s of the clock).
  assert.ok(!out.includes("\r") && !out.includes("\x1b"), "no control characters");
  const plain = out.split("\n").filter((l) => l.startsWith("["));
  assert.ok(plain.length >= 1, out);
  for (const line of plain) {
    assert.match(
      line,
      /^\[\d+\.\ds\] objects=\d+ events\/s=\d+ relists=\d+ reconnects=\d+ rv=\d+ last-event=(\d+\.\ds|none) faults=\d+$/,
    );
  }
  // 19 faults injected (at 0.2 s, 0.4 s ... 3.8 s: the run ends at 4 s), each logged; every kind
  // comes once in each round of seven.
  const logged = out.split("\n").filter((l) => l.startsWith("fault: "));
  assert.equal(logged.length, 19);
  for (const words of ["410 Gone", "TCP reset", "stalled", "429", "down for 1s", "restart"]) {
    assert.ok(
      logged.some((l) => l.includes(words)),
      `no "${words}" fault in:\n${logged.join("\n")}`,
    );
  }
  const rows = summaryRows(out);
  for (
    const name of [
      "elapsed",
      "writes",
      "events",
      "lists",
      "reconnects",
      "faults",
      "errors",
      "server",
      "store",
    ]
  ) {
    assert.ok(rows.has(name), `summary row ${name} missing:\n${out}`);
  }
  assert.match(rows.get("elapsed")!, /^4\.\ds \(seed 11\)$/);
  assert.ok(total(rows.get("writes")) > 0);
  assert.ok(total(rows.get("events")) > 0);
  // An outage or a restart takes effect when injected (the others once a request meets them):
  // recovery had work to do, and the check above says it did it.
  assert.ok(total(rows.get("faults")) >= 1, rows.get("faults"));
  assert.match(rows.get("lists")!, /initial 1/);
  // The store's count and version are the server's.
  const [, serverCount, serverRv] = /^(\d+) ConfigMaps at resourceVersion (\d+)$/.exec(
    rows.get("server")!,
  )!;
  assert.equal(rows.get("store"), `${serverCount} ConfigMaps at resourceVersion ${serverRv}`);
  assert.equal(serverRv, server!.resourceVersion);
  // Faults really reached the wire: connections refused while down, then a watch again.
  assert.ok(server!.requests.some((r) => r.verb === "watch"));
});

test("demo: the same seed gives the same churn and the same fault order", async () => {
  const runs: string[][] = [];
  for (let i = 0; i < 2; i++) {
    const fake = fakeEnv([
      "--objects",
      "30",
      "--rate",
      "200",
      "--duration",
      "1500ms",
      "--fault-every",
      "300ms",
      "--seed",
      "5",
    ]);
    assert.equal(await runOnClock(fake), 0, fake.out() + fake.err());
    const rows = summaryRows(fake.out());
    runs.push([
      ...fake.out().split("\n").filter((l) => l.startsWith("fault: ")),
      rows.get("writes")!,
    ]);
  }
  assert.deepEqual(runs[0], runs[1]);
  assert.equal(runs[0].length, 5); // 4 faults (at 0.3 s ... 1.2 s) and the writes
});

test("demo: a store that differs from the server fails the check: exit 1 with the first differences", async () => {
  const fake = fakeEnv([
    "--objects",
    "40",
    "--rate",
    "100",
    "--duration",
    "1s",
    "--fault-every",
    "0",
    "--seed",
    "3",
  ]);
  const code = await runOnClock(fake, {
    tamper: (store) => {
      const [a, b] = store.list().sort((x, y) => (x.metadata.name! < y.metadata.name! ? -1 : 1));
      store.delete(a);
      store.update({ ...b, metadata: { ...b.metadata, resourceVersion: "1" } });
      store.add({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { namespace: "demo-0", name: "zz-ghost", resourceVersion: "2" },
      });
    },
  });
  assert.equal(code, 1);
  assert.match(fake.out(), /\ncheck: FAILED, the store differs from the server\n$/);
  const err = fake.err();
  assert.match(
    err,
    /^store != server: \d+ objects in the store, \d+ on the server; 1 missing, 1 extra, 1 at another resourceVersion\n/,
  );
  assert.match(err, /\n {2}missing demo-\d\/cm-\d+ \(server at \d+\)\n/);
  assert.match(err, /\n {2}stale {3}demo-\d\/cm-\d+ \(store at 1, server at \d+\)\n/);
  assert.match(err, /\n {2}extra {3}demo-0\/zz-ghost \(store at 2, gone from the server\)\n/);
});

test("demo: on a terminal, one status line rewritten in place on stderr; Ctrl-C ends the run normally", async () => {
  // A terminal and no --duration: it runs until Ctrl-C (the env's signal), here after 2 s of the clock.
  const fake = fakeEnv(
    [
      "--objects",
      "50",
      "--rate",
      "100",
      "--fault-every",
      "500ms",
      "--seed",
      "9",
    ],
    { stdout: true, stderr: true },
    { COLUMNS: "200" },
  );
  const code = await runOnClock(fake, {}, { ms: 2_000, then: fake.abort });
  assert.equal(code, 0, fake.out() + fake.err());
  const out = fake.out();
  const err = fake.err();
  assert.match(out, /Ctrl-C to stop\n/);
  assert.match(
    out,
    /\ninterrupted: churn and faults stop; waiting for the store to reach resourceVersion \d+\n/,
  );
  assert.match(out, /\ncheck: store = server/);
  assert.ok(!out.includes("\r") && !out.includes("\x1b"), "no control characters"); // the status goes to stderr, the log to stdout
  const updates = err.split("\r\x1b[K").filter((s) => s !== "");
  assert.ok(updates.length >= 5, err);
  for (const line of updates) {
    assert.doesNotMatch(line, /\n/);
    assert.match(
      line,
      /^\d+\.\ds · \d+ objects · \d+ events\/s · rv (\d+|-) · last event (\d+\.\ds ago|none yet) · relists \d+ · reconnects \d+ · faults \d+$/,
    );
  }
  assert.ok(err.endsWith("\r\x1b[K"), "the status line is cleared before the summary");
});

test("demo: Ctrl-C before the first sync still ends with the check", async () => {
  const fake = fakeEnv(["--objects", "10", "--seed", "1"], { stderr: true });
  fake.abort();
  const code = await runOnClock(fake);
  assert.equal(code, 0, fake.out() + fake.err());
  assert.match(fake.out(), /\ninterrupted: /);
  assert.match(fake.out(), /\ncheck: store = server \(10 objects/);
});

test("demo: without COLUMNS, an 80-column terminal is assumed and the compact status line fits it", async () => {
  const fake = fakeEnv(["--objects", "10", "--duration", "1s", "--fault-every", "0"], {
    stderr: true,
  });
  assert.equal(await runOnClock(fake), 0, fake.out() + fake.err());
  const updates = fake.err().split("\r\x1b[K").filter((line) => line !== "");
  assert.ok(updates.length >= 1, fake.err());
  for (const line of updates) {
    assert.ok(line.length <= 79, line);
    assert.match(
      line,
      /^\d+\.\ds \d+ obj \d+ ev\/s rv (\d+|-) \((\d+\.\ds|-) ago\) relists \d+ reconn \d+ faults \d+$/,
    );
  }
});

test("demo --help prints the usage and exits 0", async () => {
  for (const args of [["--help"], ["-h"], ["--objects", "5", "--help"]]) {
    const fake = fakeEnv(args);
    assert.equal(await demo(fake.env), 0);
    assert.match(fake.out(), /^Usage: kube-reflector demo \[flags\]\n/);
    for (
      const flag of ["--objects", "--namespaces", "--rate", "--duration", "--fault-every", "--seed"]
    ) {
      assert.ok(fake.out().includes(flag), flag);
    }
    assert.match(fake.out(), /Exit codes: 0 the store equals the server/);
    assert.equal(fake.err(), "");
  }
});

test("demo: bad flags exit 2 with the problem and a pointer to --help, before anything starts", async () => {
  const cases: [string[], RegExp][] = [
    [["--bogus"], /unknown flag: --bogus/],
    [["--objects"], /flag needs an argument: --objects/],
    [["--objects", "many"], /--objects must be a whole number from 0 to 1000000 \(got "many"\)/],
    [["--objects", "-3"], /--objects must be a whole number/],
    [["--objects", "2000000"], /--objects must be a whole number/],
    [["--namespaces", "0"], /--namespaces must be a whole number from 1/],
    [["--rate", "1.5"], /--rate must be a whole number/],
    [["--duration", "soon"], /--duration must be a duration such as 30s/],
    [["--duration", "0s"], /--duration must be more than 0/],
    [["--fault-every", "5ms"], /--fault-every must be 0 \(no faults\) or at least 10ms/],
    [["--seed", "x"], /--seed must be a whole number from 0 to 4294967295/],
    [["now"], /demo takes no arguments \(got "now"\)/],
  ];
  for (const [args, message] of cases) {
    const fake = fakeEnv(args);
    assert.equal(await demo(fake.env), 2, args.join(" "));
    assert.match(fake.err(), message);
    assert.match(fake.err(), /\nSee 'kube-reflector demo --help'\.\n$/);
    assert.equal(fake.out(), "");
  }
});
