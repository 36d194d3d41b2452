import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { ShardMembership } from "../../src/shard/shard_membership.ts";
import {
  resolveShardOptions,
  SHARD_DEFAULTS,
  type ShardOptions,
} from "../../src/shard/shard_options.ts";
import {
  RENEW_DEADLINE_ANNOTATION,
  shardGroupLabel,
  shardLeaseName,
  timingAnnotation,
} from "../../src/shard/_shard_lease.ts";

const client = new KubeClient({ server: "http://127.0.0.1:1" });
const base: ShardOptions = { client, namespace: "default", name: "ctrl" };

test("ShardMembership refuses absurd options at construction (the rules of leader election, and a grace of at least the renew deadline)", () => {
  // deno-fmt-ignore
  const bad: [Partial<ShardOptions>, TypeErrorConstructor | RangeErrorConstructor, RegExp][] = [
    [{ client: undefined }, TypeError, /client/],
    [{ client: {} as KubeClient }, TypeError, /client/],
    [{ namespace: "" }, TypeError, /namespace/],
    [{ name: "Not A Name" }, TypeError, /name/],
    [{ name: "x".repeat(254) }, TypeError, /name/],
    [{ identity: "" }, TypeError, /identity/],
    [{ identity: 7 as never }, TypeError, /identity/],
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, RangeError, /leaseDurationMs/],
    [{ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, RangeError, /1\.2/],
    [{ retryPeriodMs: NaN }, RangeError, /retryPeriodMs/],
    [{ leaseDurationMs: Infinity }, RangeError, /leaseDurationMs/],
    [{ retryPeriodMs: 10 }, RangeError, /retryPeriodMs/],
    [{ graceMs: 9_999 }, RangeError, /graceMs/],
    [{ graceMs: -1 }, RangeError, /graceMs/],
    [{ graceMs: NaN }, RangeError, /graceMs/],
    [{ onError: "no" as never }, TypeError, /onError/],
    [{ random: 1 as never }, TypeError, /random/],
    [{ clock: {} as never }, TypeError, /clock/],
  ];
  for (const [options, type, message] of bad) {
    assert.throws(() => new ShardMembership({ ...base, ...options }), (err: Error) => {
      assert.ok(err instanceof type, `${JSON.stringify(options)}: ${err}`);
      assert.match(err.message, message);
      assert.match(err.message, /^ShardMembership: /);
      return true;
    });
  }
  assert.throws(() => new ShardMembership(undefined as never), TypeError);
});

test("ShardMembership's defaults: those of leader election, a grace of renew deadline + retry period, a random identity", async () => {
  assert.deepEqual(SHARD_DEFAULTS, {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
  assert.ok(Object.isFrozen(SHARD_DEFAULTS));
  const o = resolveShardOptions(base);
  assert.deepEqual(
    [o.leaseDurationMs, o.renewDeadlineMs, o.retryPeriodMs, o.graceMs],
    [15_000, 10_000, 2_000, 12_000],
  );
  assert.equal(
    resolveShardOptions({ ...base, renewDeadlineMs: 5_000, retryPeriodMs: 1_000 }).graceMs,
    6_000,
  );
  assert.equal(resolveShardOptions({ ...base, graceMs: 10_000 }).graceMs, 10_000);
  const m = new ShardMembership(base);
  assert.match(m.identity, /[0-9a-f]{8}$/);
  assert.notEqual(new ShardMembership(base).identity, m.identity);
  assert.equal(new ShardMembership({ ...base, identity: "pod-0" }).identity, "pod-0");
  // not running: no members, owns nothing
  assert.deepEqual(m.members, []);
  assert.equal(m.owning, false);
  assert.equal(m.owns("default/a"), false);
  assert.equal(m.transitions, 0);
  assert.throws(() => m.onChange("no" as never), TypeError);
  await assert.rejects(() => m.run({} as never), TypeError);
});

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

test("shard Leases: named after the group and 16 hex digits of the identity, a valid name at any length; the group label fits 63 characters", () => {
  // deno-fmt-ignore
  const groups = ["ctrl", "my.controller", "a".repeat(63), "b".repeat(64), `${"c".repeat(235)}.d-e`, "e".repeat(253), `${"f".repeat(45)}.-${"g".repeat(30)}`];
  for (const group of groups) {
    for (const identity of ["pod-0", "host_1234abcd", "ü 😀", "x".repeat(253)]) {
      const name = shardLeaseName(group, identity);
      assert.ok(name.length <= 253, `${name.length}`);
      assert.match(name, /-[0-9a-f]{16}$/);
      if (!group.includes(".-")) assert.match(name, DNS_SUBDOMAIN, name);
      assert.equal(shardLeaseName(group, identity), name, "stable");
    }
    const label = shardGroupLabel(group);
    assert.ok(label.length <= 63, label);
    assert.match(label, LABEL_VALUE, label);
    if (group.length <= 63) assert.equal(label, group);
  }
  assert.equal(shardLeaseName("ctrl", "pod-0"), shardLeaseName("ctrl", "pod-0"));
  assert.notEqual(shardLeaseName("ctrl", "pod-0"), shardLeaseName("ctrl", "pod-1"));
  assert.notEqual(shardGroupLabel("b".repeat(64)), shardGroupLabel("b".repeat(65)));
});

test("shard Leases: a member's renew deadline is read from its annotation; anything but whole ms in [0, 3600000] reads as not written (0)", () => {
  const read = (value: unknown) =>
    timingAnnotation({ [RENEW_DEADLINE_ANNOTATION]: value }, RENEW_DEADLINE_ANNOTATION);
  // deno-fmt-ignore
  const rows: [unknown, number][] = [
    ["10000", 10_000], ["0", 0], ["3600000", 3_600_000], ["3600001", 0], ["99999999", 0],
    ["", 0], ["1.5", 0], ["-1", 0], ["1e4", 0], [" 100", 0], ["0x10", 0], [10_000, 0], [undefined, 0],
  ];
  for (const [value, expected] of rows) assert.equal(read(value), expected, String(value));
  assert.equal(timingAnnotation(undefined, RENEW_DEADLINE_ANNOTATION), 0);
  assert.equal(timingAnnotation("x", RENEW_DEADLINE_ANNOTATION), 0);
});
