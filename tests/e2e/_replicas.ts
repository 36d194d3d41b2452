/**
 * Helpers of the replicas e2e (tests/e2e/replicas_test.ts): replicas of the
 * mirror controller example, the reconcile log they append to and its
 * independent checker, a churn of Deployments, and the cluster's state
 * judged against what the Deployments call for.
 *
 * @module
 */
import { appendFileSync, readFileSync } from "node:fs";
import { type KubeClient, type KubeObject, resourceClient } from "../../mod.ts";
import { MirrorControllerProcess } from "../examples/_mirror_controller_process.ts";
import { eventually, Fatal } from "./_cluster.ts";

export const OF = "mirror.kube-reflector.dev/of";
export const FINALIZER = "mirror.kube-reflector.dev/cleanup";

// --- The reconcile log and its checker. ----------------------------------------------------------

/** One line of the reconcile log: `start <pid> <key>`, `end <pid> <key> ok|error`, `killed <pid>`. */
export type LogLine =
  | { kind: "start"; pid: string; key: string }
  | { kind: "end"; pid: string; key: string; ok: boolean }
  | { kind: "killed"; pid: string };

/** Parses a reconcile log; throws on a malformed line (a torn write would be one). */
export function parseLog(text: string): LogLine[] {
  return text.split("\n").filter((l) => l !== "").map((line, i) => {
    const [kind, pid, key, outcome, ...more] = line.split(" ");
    const bad = () =>
      new Error(`reconcile log line ${i + 1} is malformed: ${JSON.stringify(line)}`);
    if (!/^\d+$/.test(pid ?? "") || more.length > 0) throw bad();
    if (kind === "killed" && key === undefined) return { kind, pid };
    if (kind === "start" && key && outcome === undefined) return { kind, pid, key };
    if (kind === "end" && key && (outcome === "ok" || outcome === "error")) {
      return { kind, pid, key, ok: outcome === "ok" };
    }
    throw bad();
  });
}

/**
 * What breaks "no key is reconciled by two processes at once" in a log, in
 * the log's order (one line per append, O_APPEND: a global order): a
 * `start` of a key while another process's `start` of it is open, an `end`
 * without its `start`, and, when `finished`, a start never ended (a process
 * killed with -9 has its open starts closed by the `killed` line the test
 * appended once the kill completed).
 */
export function logViolations(lines: readonly LogLine[], { finished = false } = {}): string[] {
  const open = new Map<string, { pid: string; at: number }>();
  const violations: string[] = [];
  lines.forEach((l, i) => {
    if (l.kind === "killed") {
      for (const [key, o] of open) if (o.pid === l.pid) open.delete(key);
      return;
    }
    const o = open.get(l.key);
    if (l.kind === "start") {
      if (o) {
        violations.push(
          `line ${i + 1}: ${l.pid} starts ${l.key} while ${o.pid} reconciles it (since line ${
            o.at + 1
          })`,
        );
      }
      open.set(l.key, { pid: l.pid, at: i });
    } else if (o?.pid === l.pid) {
      open.delete(l.key);
    } else {
      violations.push(`line ${i + 1}: ${l.pid} ends ${l.key}, which it had not started`);
    }
  });
  if (finished) {
    for (const [key, o] of open) {
      violations.push(`line ${o.at + 1}: ${o.pid} started ${key} and never ended`);
    }
  }
  return violations;
}

/**
 * The keys of `lastChange` (key → the log's length when its last change
 * was made) that no process reconciled successfully after that change (a
 * `start` at or after that index, ended `ok`).
 */
export function keysNotReconciledSince(
  lines: readonly LogLine[],
  lastChange: ReadonlyMap<string, number>,
): string[] {
  const reconciledFrom = new Map<string, number>(); // key → the latest start of an ok reconcile
  const open = new Map<string, number>(); // "pid key" → its start
  lines.forEach((l, i) => {
    if (l.kind === "start") open.set(`${l.pid} ${l.key}`, i);
    if (l.kind === "end") {
      const at = open.get(`${l.pid} ${l.key}`);
      open.delete(`${l.pid} ${l.key}`);
      if (l.ok && at !== undefined) {
        reconciledFrom.set(l.key, Math.max(at, reconciledFrom.get(l.key) ?? -1));
      }
    }
  });
  return [...lastChange].filter(([key, at]) => (reconciledFrom.get(key) ?? -1) < at)
    .map(([key, at]) => `${key} (changed at line ${at + 1})`);
}

/** The reconcile log file the replicas append to. */
export class ReconcileLog {
  constructor(readonly path: string) {
    appendFileSync(path, "");
  }
  lines(): LogLine[] {
    return parseLog(readFileSync(this.path, "utf8"));
  }
  /** The number of lines so far: an index in the log's order. */
  length(): number {
    return this.lines().length;
  }
  /** Closes the open starts of a process killed with -9 (call once it has exited). */
  killed(pid: number): void {
    appendFileSync(this.path, `killed ${pid}\n`);
  }
  /** The keys `pid` started reconciling (before now). */
  keysOf(pid: number): Set<string> {
    return new Set(
      this.lines().flatMap((l) => l.kind === "start" && l.pid === String(pid) ? [l.key] : []),
    );
  }

  /**
   * Resolves with the time at which a `start` of one of `keys` by a process
   * other than `pid`, at or after line `from`, was seen.
   */
  async firstStartOfByOthers(
    keys: ReadonlySet<string>,
    pid: number,
    from: number,
    timeoutMs: number,
  ): Promise<number> {
    let seen = 0;
    await eventually(
      () => {
        const found = this.lines().slice(from).some((l) =>
          l.kind === "start" && l.pid !== String(pid) && keys.has(l.key)
        );
        if (found) seen = Date.now();
        return found;
      },
      `a reconcile of one of ${[...keys]} by another process than ${pid}`,
      timeoutMs,
    );
    return seen;
  }

  /** Resolves with the time at which a `start` by `pid` at or after line `from` was seen. */
  async firstStartBy(pid: number, from: number, timeoutMs: number): Promise<number> {
    let seen = 0;
    await eventually(
      () => {
        const found = this.lines().slice(from).some((l) =>
          l.kind === "start" && l.pid === String(pid)
        );
        if (found) seen = Date.now();
        return found;
      },
      `a reconcile by ${pid}`,
      timeoutMs,
    );
    return seen;
  }
}

// --- Replicas. ----------------------------------------------------------------------------------

/** A replica of the example: its identity and process. */
export interface Replica {
  identity: string;
  proc: MirrorControllerProcess;
  pid: number;
}

/** Starts a replica of the mirror controller with `args` (Deno: with write permission, for the log). */
export function startReplica(identity: string, args: string[]): Replica {
  const proc = new MirrorControllerProcess([...args, "--identity", identity], {
    denoPermissions: ["--allow-net", "--allow-env", "--allow-read", "--allow-write"],
  });
  return { identity, proc, pid: proc.child.pid! };
}

/** Resolves once a line matching `pattern` comes at or after line `from` of `proc`'s output. */
export async function lineAfter(
  proc: MirrorControllerProcess,
  from: number,
  pattern: RegExp,
  timeoutMs: number,
): Promise<number> {
  let seen = 0;
  await eventually(
    () => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
        throw new Fatal("the replica exited"); // (its output is added below)
      }
      const found = proc.lines.slice(from).some((l) => pattern.test(l));
      if (found) seen = Date.now();
      return found;
    },
    `a line matching ${pattern}`,
    timeoutMs,
  ).catch((err) => {
    throw new Error(`${err.message}\noutput:\n${proc.output}`);
  });
  return seen;
}

// --- Deployments, their churn, and the state they call for. -------------------------------------

export interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { name: string; image: string }[] };
    };
  };
}
type ConfigMap = KubeObject & { data?: Record<string, string> };

export function deployment(name: string, { mirror = true, replicas = 1 } = {}): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: mirror ? { mirror: "true" } : {} },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: `nginx:1.${replicas}` }] },
      },
    },
  };
}

const sorted = (data: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(data).sort(([a], [b]) => a < b ? -1 : 1));

/**
 * What is wrong in `namespace` now, or `[]`: the mirrors must be exactly
 * those the labelled Deployments call for, no Deployment may be left
 * terminating (a lost delete: its finalizer never removed), labelled ones
 * carry the finalizer, unlabelled ones do not.
 */
export async function wrongs(admin: KubeClient, namespace: string): Promise<string[]> {
  const deployments = resourceClient<Deployment>(admin, {
    apiVersion: "apps/v1",
    resource: "deployments",
    namespace,
  });
  const configMaps = resourceClient<ConfigMap>(admin, {
    apiVersion: "v1",
    resource: "configmaps",
    namespace,
  });
  const [ds, cms] = await Promise.all([
    deployments.list(),
    configMaps.list({ labelSelector: OF }),
  ]);
  const out: string[] = [];
  const want = new Map<string, string>();
  for (const d of ds.items) {
    const { name, labels, finalizers = [], deletionTimestamp } = d.metadata;
    const labelled = labels?.mirror === "true";
    if (deletionTimestamp) out.push(`${name} is still terminating (finalizers ${finalizers})`);
    else if (labelled && !finalizers.includes(FINALIZER)) out.push(`${name} lacks the finalizer`);
    if (!labelled && finalizers.includes(FINALIZER)) out.push(`${name} (unlabelled) has it`);
    if (labelled && !deletionTimestamp) {
      want.set(
        `${name}-mirror`,
        JSON.stringify({
          of: name,
          owner: d.metadata.uid,
          data: sorted({
            replicas: String(d.spec.replicas),
            images: d.spec.template.spec.containers.map((c) => c.image).join(","),
            generation: String(d.metadata.generation),
          }),
        }),
      );
    }
  }
  const have = new Map(cms.items.map((cm) => {
    const owners = (cm.metadata.ownerReferences ?? []) as { uid?: string }[];
    return [
      cm.metadata.name!,
      JSON.stringify({
        of: cm.metadata.labels?.[OF],
        owner: owners.map((o) => o.uid).join(","),
        data: sorted(cm.data),
      }),
    ];
  }));
  for (const [name, v] of want) {
    if (have.get(name) !== v) out.push(`mirror ${name}: want ${v}, have ${have.get(name)}`);
  }
  for (const name of have.keys()) if (!want.has(name)) out.push(`mirror ${name} should be gone`);
  return out;
}

/** Waits until {@linkcode wrongs} finds nothing. */
export async function converged(
  admin: KubeClient,
  namespace: string,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  let last: string[] = [];
  await eventually(
    async () => (last = await wrongs(admin, namespace)).length === 0,
    what,
    timeoutMs,
  )
    .catch((err) => {
      throw new Error(`${err.message}:\n${last.join("\n")}`);
    });
}

/**
 * Changes Deployments in `namespace` every `intervalMs` until stopped:
 * creates (new names: a name being deleted cannot be reused), updates,
 * removes and puts back the `mirror=true` label, deletes (labelled or not).
 * It records, per key, the reconcile log's length just before each change
 * the controller can see (that of a Deployment labelled before or after it).
 */
export class Churn {
  /**
   * Key → the reconcile log's length after its last change, for the
   * Deployments labelled now (the controller's keys: a change of one is
   * always reconciled after it). Those deleted or unlabelled are judged by
   * the cluster's state instead (gone, no mirror, no finalizer): a delete
   * made while no replica owned the key leaves no key in any cache to
   * reconcile, and needs no reconcile when it left no mirror.
   */
  get lastChange(): Map<string, number> {
    return new Map(
      [...this.#lastChange].filter(([key]) => this.live.get(key.split("/")[1]) === true),
    );
  }
  readonly #lastChange = new Map<string, number>();
  /** name → labelled, of the Deployments not deleted. */
  readonly live = new Map<string, boolean>();
  readonly deleted: string[] = [];
  changes = 0;
  #stop = false;
  #done: Promise<void> | undefined;
  #next = 0;
  readonly #replicas = new Map<string, number>();
  #seed: number;

  constructor(
    readonly admin: KubeClient,
    readonly namespace: string,
    readonly log: ReconcileLog,
    { seed = 1 } = {},
  ) {
    this.#seed = seed;
  }

  #random(): number { // deterministic per seed: a failure can be replayed
    this.#seed = (this.#seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return this.#seed / 2 ** 31;
  }
  #pick<T>(items: T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.#random() * items.length)];
  }
  #api() {
    return resourceClient<Deployment>(this.admin, {
      apiVersion: "apps/v1",
      resource: "deployments",
      namespace: this.namespace,
    });
  }
  /** Records a change of `name` made after the log had `at` lines. */
  #record(name: string, at: number) {
    this.changes++;
    this.#lastChange.set(`${this.namespace}/${name}`, at);
  }

  /** Creates `count` labelled Deployments (before the replicas start). */
  async seed(count: number): Promise<void> {
    for (let i = 0; i < count; i++) await this.create(true);
  }

  async create(labelled: boolean): Promise<void> {
    const name = `d-${this.#next++}`;
    const at = this.log.length(); // before the change: a reconcile that sees it starts after
    await this.#api().create(deployment(name, { mirror: labelled }));
    this.live.set(name, labelled);
    if (labelled) this.#record(name, at);
  }

  /** One random change. */
  async step(): Promise<void> {
    const api = this.#api();
    const names = [...this.live.keys()];
    const labelled = names.filter((n) => this.live.get(n));
    const unlabelled = names.filter((n) => !this.live.get(n));
    const r = this.#random();
    const at = this.log.length(); // before the change: a reconcile that sees it starts after
    if (r < 0.25 || names.length < 6) return await this.create(this.#random() < 0.85);
    if (r < 0.55) {
      const name = this.#pick(labelled);
      if (!name) return;
      const replicas = (this.#replicas.get(name) ?? 1) % 9 + 1; // a change: never a no-op patch
      await api.patch(name, { spec: deployment(name, { replicas }).spec });
      this.#replicas.set(name, replicas);
      return this.#record(name, at);
    }
    if (r < 0.68) {
      // Only a Deployment whose mirror exists: its finalizer is on and the mirror informer will
      // point a replica at it (a replica killed between adding the finalizer and its first
      // apply, with the label removed before another takes over, is the example's documented gap).
      const name = this.#pick(labelled);
      if (!name) return;
      const mirror = await resourceClient<ConfigMap>(this.admin, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: this.namespace,
      }).get(`${name}-mirror`).catch(() => undefined);
      if (!mirror) return;
      await api.patch(name, { metadata: { labels: { mirror: null } } } as never);
      this.live.set(name, false);
      return this.#record(name, at);
    }
    if (r < 0.78) {
      const name = this.#pick(unlabelled);
      if (!name) return;
      await api.patch(name, { metadata: { labels: { mirror: "true" } } });
      this.live.set(name, true);
      return this.#record(name, at);
    }
    if (names.length < 8) return;
    const name = this.#pick(names)!;
    await api.delete(name);
    const wasLabelled = this.live.get(name);
    this.live.delete(name);
    this.deleted.push(name);
    if (wasLabelled) this.#record(name, at);
  }

  /** Starts changing every `intervalMs` (a failed change fails the churn: `stop()` rethrows it). */
  start(intervalMs: number): void {
    this.#done = (async () => {
      while (!this.#stop) {
        await this.step();
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
    this.#done.catch(() => {}); // rethrown by stop()
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await this.#done;
  }

  /** The deleted Deployments still on the server (none, once everything converged). */
  async deletedStillThere(): Promise<string[]> {
    const list = await this.#api().list();
    const there = new Set(list.items.map((d) => d.metadata.name));
    return this.deleted.filter((n) => there.has(n));
  }
}

/** The holder of the Lease `namespace/name` (`""`: none). */
export async function leaseHolder(admin: KubeClient, namespace: string, name: string) {
  const leases = resourceClient<KubeObject & { spec?: { holderIdentity?: string } }>(admin, {
    apiVersion: "coordination.k8s.io/v1",
    resource: "leases",
    namespace,
  });
  const lease = await leases.get(name);
  return lease.spec?.holderIdentity ?? "";
}
