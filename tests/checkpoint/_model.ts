/**
 * A model of a store for the incremental checkpoint tests: objects by key
 * at a resourceVersion, changed step by step, each step's net changes
 * handed to saveCheckpoint and the objects compared with what loads.
 *
 * @module
 */
import type { KubeObject } from "../../src/api/types.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { saveCheckpoint, type SavedCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import type { SaveCheckpointOptions } from "../../src/checkpoint/save_checkpoint_options.ts";
import { configMap, IDENTITY } from "./_helpers.ts";

/** One net change: the key, and the object now or `undefined` when deleted. */
export type Change = readonly [string, KubeObject | undefined];

/** The store key of an object. */
export const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Objects by key (in the order a load gives them: updated in place, added at the end) at a version. */
export class Model {
  objects = new Map<string, KubeObject>();
  resourceVersion: string;

  constructor(count: number, resourceVersion = 1000, size = 200) {
    for (let i = 0; i < count; i++) {
      const o = configMap(i, size);
      this.objects.set(keyOf(o), o);
    }
    this.resourceVersion = String(resourceVersion);
  }

  get items(): KubeObject[] {
    return [...this.objects.values()];
  }

  /** A copy (the objects are shared: they are never changed in place). */
  clone(): Model {
    const m = new Model(0, Number(this.resourceVersion));
    m.objects = new Map(this.objects);
    return m;
  }

  /**
   * Moves to the next version with `n` changes: every third one a
   * deletion, every third an addition, the rest updates. Returns the net
   * changes.
   */
  step(n: number, size = 200): Change[] {
    const rv = Number(this.resourceVersion) + 1;
    const keys = [...this.objects.keys()];
    const changes: Change[] = [];
    for (let i = 0; i < n; i++) {
      if (i % 3 === 1 && keys.length > i) {
        const key = keys[(rv * 7 + i * 13) % keys.length];
        if (!this.objects.has(key)) continue;
        this.objects.delete(key);
        changes.push([key, undefined]);
      } else if (i % 3 === 2) {
        const o = configMap(100_000 + rv * 1000 + i, size);
        this.objects.set(keyOf(o), o);
        changes.push([keyOf(o), o]);
      } else {
        const key = keys[(rv * 11 + i * 17) % keys.length];
        const old = this.objects.get(key);
        if (!old) continue;
        const o = { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } };
        this.objects.set(key, o);
        changes.push([key, o]);
      }
    }
    // net changes: each key once, its last state
    const net = new Map(changes);
    this.resourceVersion = String(rv);
    return [...net];
  }
}

/** Saves the model with the given net changes since `since`. */
export function saveModel(
  storage: CheckpointStorage,
  model: Model,
  changes: Change[] | undefined,
  since: string,
  options: SaveCheckpointOptions = {},
  key = "k",
): Promise<SavedCheckpoint> {
  return saveCheckpoint(storage, key, {
    identity: IDENTITY,
    resourceVersion: model.resourceVersion,
    items: model.items,
    ...(changes ? { changes: { since, objects: changes } } : {}),
  }, options);
}
