/**
 * The demo's churn: ConfigMaps created, updated and deleted on the test API
 * server at random (seeded), keeping their number near a target.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { FakeApiServer } from "../testkit/fake_api_server.ts";
import { randomInt } from "./_demo_random.ts";

/** What one churn step did. */
export type ChurnOp = "create" | "update" | "delete";

/** The namespace names of the demo: `demo-0`, `demo-1`... */
export function demoNamespaces(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `demo-${i}`);
}

/**
 * Which operation a step does, for a draw `r` in [0, 1), with `count`
 * objects now and `target` wanted: mostly updates; creates and deletes
 * balanced so that the count drifts back to the target.
 */
export function chooseOp(r: number, count: number, target: number): ChurnOp {
  if (count === 0) return "create";
  const drift = target === 0 ? -1 : Math.max(-1, Math.min(1, (target - count) / target * 10));
  const create = 0.25 + 0.2 * drift;
  if (r < create) return "create";
  if (r < 0.5) return "delete";
  return "update";
}

/** Churns one resource (`configmaps`) of one server; the only writer of those objects. */
export class Churn {
  readonly #server: FakeApiServer;
  readonly #random: () => number;
  readonly #namespaces: readonly string[];
  readonly #target: number;
  /** Live objects as `[namespace, name]`, for picking one at random without listing. */
  readonly #live: [string, string][] = [];
  #seq = 0;
  /** Operations done, by kind. */
  readonly done: Record<ChurnOp, number> = { create: 0, update: 0, delete: 0 };

  constructor(
    server: FakeApiServer,
    random: () => number,
    namespaces: readonly string[],
    target: number,
  ) {
    this.#server = server;
    this.#random = random;
    this.#namespaces = namespaces;
    this.#target = target;
  }

  /** Creates the initial objects (not counted as churn). */
  populate(): void {
    for (let i = 0; i < this.#target; i++) {
      this.#create(this.#namespaces[i % this.#namespaces.length]);
    }
  }

  /** Does `n` random operations. */
  step(n: number): void {
    for (let i = 0; i < n; i++) {
      const op = chooseOp(this.#random(), this.#live.length, this.#target);
      if (op === "create") {
        this.#create(this.#namespaces[randomInt(this.#random, this.#namespaces.length)]);
      } else {
        const at = randomInt(this.#random, this.#live.length);
        const [namespace, name] = this.#live[at];
        if (op === "update") {
          this.#server.update(configMap(namespace, name, this.#random()));
        } else {
          this.#server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace, name });
          this.#live[at] = this.#live[this.#live.length - 1];
          this.#live.pop();
        }
      }
      this.done[op]++;
    }
  }

  #create(namespace: string): void {
    const name = `cm-${this.#seq++}`;
    this.#server.create(configMap(namespace, name, this.#random()));
    this.#live.push([namespace, name]);
  }
}

function configMap(namespace: string, name: string, value: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels: { app: "kube-reflector-demo" } },
    data: { value: value.toFixed(6) },
  };
}
