/**
 * A stand-in informer for the health tests: a plain object with the three
 * members the health endpoint reads, whose status the test sets.
 */
import type { ReflectorStatus } from "../../src/reflector/reflector.ts";

/** The start of fake time in the health tests. */
export const START = Date.parse("2026-12-06T00:00:00Z");

export interface FakeInformer {
  name: string;
  synced: boolean;
  state: ReflectorStatus["state"];
  since: number;
  lastEventAt?: number;
  lastError?: ReflectorStatus["lastError"];
  hasSynced(): boolean;
  readonly status: ReflectorStatus;
}

/** A synced informer watching since `START`, unless told otherwise. */
export function fakeInformer(
  name: string,
  init: Partial<Omit<FakeInformer, "name" | "hasSynced" | "status">> = {},
): FakeInformer {
  return {
    synced: true,
    state: "watching",
    since: START,
    ...init,
    name,
    hasSynced() {
      return this.synced;
    },
    get status(): ReflectorStatus {
      return {
        state: this.state,
        watching: this.state === "watching",
        since: this.since,
        ...(this.lastEventAt !== undefined && { lastEventAt: this.lastEventAt }),
        ...(this.lastError && { lastError: this.lastError }),
      };
    },
  };
}
