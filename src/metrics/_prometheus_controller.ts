/**
 * Internals of the Prometheus adapter: the controller metrics, registered
 * on the first `controller(name)` call and computed at scrape time from the
 * controllers' sources (prom-client's `collect()`).
 *
 * @module
 */
import type { ControllerOwnership } from "../controller/controller_ownership.ts";
import type { ControllerMetrics, ControllerMetricsSources } from "./controller_metrics.ts";
import type { PromClientLike, PromRegistryLike } from "./prom_client_like.ts";

const MODES = ["single", "leader", "shards"] as const;

/** One live controller: its sources and the transitions already counted. */
interface LiveController {
  sources: ControllerMetricsSources;
  counted: number;
}

/** The ownership of each controller of a name, or `undefined` when one source throws or lies. */
function ownerships(controllers: Set<LiveController>): ControllerOwnership[] | undefined {
  const all: ControllerOwnership[] = [];
  try {
    for (const c of controllers) {
      const o = c.sources.ownership();
      if (!o || !(MODES as readonly unknown[]).includes(o.mode)) return undefined;
      all.push(o);
    }
  } catch {
    return undefined;
  }
  return all;
}

/** The controller half of the adapter; `names` receives the metric names it registers. */
export function controllerSeries<R extends PromRegistryLike>(
  client: PromClientLike<R>,
  registry: R,
  prefix: string,
  names: string[],
) {
  const live = new Map<string, Set<LiveController>>();
  let metrics: ReturnType<typeof create> | undefined;

  function create() {
    const base = (name: string, help: string, labelNames = ["name"]) => {
      names.push(prefix + name);
      return { name: prefix + name, help, labelNames, registers: [registry] };
    };
    // A gauge recomputed for every live name at each scrape; `read` returns undefined to skip a name.
    const sampled = (
      name: string,
      help: string,
      read: (controllers: Set<LiveController>) => number | undefined,
    ) => {
      const gauge = new client.Gauge({
        ...base(name, help),
        collect: () => {
          try {
            gauge.reset();
            for (const [n, controllers] of live) {
              const v = read(controllers);
              if (v !== undefined && Number.isFinite(v)) gauge.set({ name: n }, v);
            }
          } catch { /* a scrape never fails because of a controller */ }
        },
      });
      return gauge;
    };

    const owning = new client.Gauge({
      ...base(
        "controller_owning",
        "1 while this replica may reconcile keys (always in mode single, while leading, or as a shard member), else 0.",
        ["name", "mode"],
      ),
      collect: () => {
        try {
          owning.reset();
          for (const [name, controllers] of live) {
            const all = ownerships(controllers);
            if (!all) continue;
            const byMode = new Map<string, number>();
            for (const o of all) byMode.set(o.mode, (byMode.get(o.mode) ?? 0) + (o.owning ? 1 : 0));
            for (const [mode, v] of byMode) owning.set({ name, mode }, v);
          }
        } catch { /* a scrape never fails because of a controller */ }
      },
    });
    const leader = sampled(
      "controller_leader",
      "1 while this replica is the leader, else 0 (mode leader only).",
      (controllers) => {
        const all = ownerships(controllers)?.filter((o) => o.mode === "leader");
        if (!all?.length) return undefined;
        return all.reduce((n, o) => n + (o.owning ? 1 : 0), 0);
      },
    );
    const members = sampled(
      "controller_shard_members",
      "Live members sharing the keys, as this replica sees them (mode shards only).",
      (controllers) => {
        const counts = ownerships(controllers)
          ?.filter((o) => o.mode === "shards" && Array.isArray(o.members))
          .map((o) => o.members!.length);
        return counts?.length ? Math.max(...counts) : undefined;
      },
    );
    const keys = sampled(
      "controller_keys_owned",
      "Keys this replica owns now.",
      (controllers) => {
        let total: number | undefined;
        try {
          for (const c of controllers) {
            if (!c.sources.keysOwned) continue;
            const v = c.sources.keysOwned();
            if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
            total = (total ?? 0) + v;
          }
        } catch {
          return undefined;
        }
        return total;
      },
    );
    // A counter whose value comes from the sources: each scrape adds what they counted since the last.
    const transitions = new client.Counter({
      ...base(
        "controller_ownership_transitions_total",
        "Changes of ownership (owning, and the shard members) since the controller started.",
      ),
      collect: () => {
        for (const [name, controllers] of live) {
          for (const c of controllers) {
            try {
              const t = c.sources.ownership().transitions;
              if (typeof t !== "number" || !Number.isFinite(t) || t < 0) continue;
              if (t > c.counted) transitions.inc({ name }, t - c.counted);
              c.counted = t; // a source that went back (restarted) counts on from there
            } catch { /* this controller's transitions wait for the next scrape */ }
          }
        }
      },
    });
    return { owning, leader, members, keys, transitions };
  }

  return {
    /** Controller names with live series. */
    names: () => [...live.keys()],
    /** Forgets every controller (after the adapter's metrics were unregistered). */
    clear() {
      live.clear();
      metrics = undefined;
    },
    controller(name: string, sources: ControllerMetricsSources): ControllerMetrics {
      if (typeof name !== "string" || name === "") {
        throw new TypeError("controller metrics: name must be a non-empty string");
      }
      if (typeof sources?.ownership !== "function") {
        throw new TypeError("controller metrics: sources.ownership must be a function");
      }
      if (sources.keysOwned !== undefined && typeof sources.keysOwned !== "function") {
        throw new TypeError("controller metrics: sources.keysOwned must be a function");
      }
      const m = metrics ??= create();
      let controllers = live.get(name);
      if (!controllers) {
        live.set(name, controllers = new Set());
        m.transitions.inc({ name }, 0);
      }
      const set = controllers;
      const self: LiveController = { sources, counted: 0 };
      set.add(self);
      let disposed = false;
      return {
        dispose() {
          if (disposed) return;
          disposed = true;
          set.delete(self);
          if (set.size > 0 || live.get(name) !== set) return;
          live.delete(name);
          try {
            for (const mode of MODES) m.owning.remove({ name, mode });
            for (const metric of [m.leader, m.members, m.keys, m.transitions]) {
              metric.remove({ name });
            }
          } catch { /* metrics never break the controller */ }
        },
      };
    },
  };
}
