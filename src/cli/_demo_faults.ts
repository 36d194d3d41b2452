/**
 * The demo's fault schedule: one fault at a time, in a seeded order that
 * shows every kind once per round (410s on watches and relists, dropped and
 * stalled connections, 429 with Retry-After, an API server outage, an API
 * server restart that loses the watch history), injected into the test API
 * server; a fault that a request must meet is followed by the end of the
 * open watches, so that the next request meets it.
 *
 * @module
 */
import type { Clock, TimerHandle } from "../async/clock.ts";
import type { FakeApiServer } from "../testkit/fake_api_server.ts";
import type { InjectedFault } from "../testkit/fault.ts";
import { randomInt } from "./_demo_random.ts";

/** The kinds of fault the demo injects, in their default order. */
export const DEMO_FAULT_KINDS = [
  "watch-410",
  "relist-410",
  "restart",
  "reset",
  "stall",
  "429",
  "outage",
] as const;

/** One kind of fault. */
export type DemoFaultKind = typeof DEMO_FAULT_KINDS[number];

/** How long an outage lasts, in ms. */
export const OUTAGE_MS = 1_000;

interface Injected {
  kind: DemoFaultKind;
  /** The rule, for the faults the server's rules make; else the fault took effect when injected. */
  handle?: InjectedFault;
}

/** Injects faults one at a time and counts those that took effect. */
export class FaultSchedule {
  readonly #server: FakeApiServer;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #injected: Injected[] = [];
  #round: DemoFaultKind[] = [];
  #outageTimer: TimerHandle | undefined;
  #pending: Promise<void> = Promise.resolve();
  #down = false;

  constructor(server: FakeApiServer, random: () => number, clock: Clock) {
    this.#server = server;
    this.#random = random;
    this.#clock = clock;
  }

  /** Injects the next fault; returns what it is, in words. */
  injectNext(): string {
    if (this.#round.length === 0) this.#round = shuffle([...DEMO_FAULT_KINDS], this.#random);
    let kind = this.#round.shift()!;
    // One outage at a time: while the server is down, an outage or restart becomes a reset.
    if ((kind === "outage" || kind === "restart") && this.#down) kind = "reset";
    return this.#inject(kind);
  }

  /** Faults that took effect so far (a rule counts once a request met it). */
  get fired(): number {
    let n = 0;
    for (const f of this.#injected) n += f.handle ? f.handle.fired : 1;
    return n;
  }

  /** Faults that took effect, by kind (every kind listed). */
  firedByKind(): Map<DemoFaultKind, number> {
    const counts = new Map<DemoFaultKind, number>(DEMO_FAULT_KINDS.map((k) => [k, 0]));
    for (const f of this.#injected) {
      counts.set(f.kind, counts.get(f.kind)! + (f.handle ? f.handle.fired : 1));
    }
    return counts;
  }

  /** Stops: removes the rules not yet met, ends an outage; resolves once the server listens again. */
  async stop(): Promise<void> {
    this.#server.clearFaults();
    this.#clock.clearTimeout(this.#outageTimer);
    this.#outageTimer = undefined;
    if (this.#down) this.#comeUp();
    await this.#pending;
  }

  #inject(kind: DemoFaultKind): string {
    const server = this.#server;
    const after = 1 + randomInt(this.#random, 5);
    const rule = (handle: InjectedFault) => {
      this.#injected.push({ kind, handle });
      server.endWatches();
    };
    switch (kind) {
      case "watch-410":
        rule(server.inject({
          verb: "watch",
          resource: "configmaps",
          fault: { kind: "error-event", code: 410, afterEvents: after },
        }));
        return `410 Gone: the watch gets an ERROR event after ${after} event(s)`;
      case "relist-410":
        rule(server.inject({
          verb: "watch",
          resource: "configmaps",
          times: 2,
          fault: { kind: "status", code: 410 },
        }));
        return "410 Gone as the HTTP status, twice: the watch, then the relist";
      case "restart":
        this.#outage(kind, () => server.compact());
        return `API server restart: down for ${OUTAGE_MS / 1000}s, back with no watch history ` +
          "(a watch from an older version gets 410 Gone)";
      case "reset":
        rule(server.inject({
          verb: "watch",
          resource: "configmaps",
          fault: { kind: "reset", afterEvents: after },
        }));
        return `dropped connection: TCP reset after ${after} event(s)`;
      case "stall":
        rule(server.inject({
          verb: "watch",
          resource: "configmaps",
          fault: { kind: "stall", afterEvents: after },
        }));
        return `stalled connection: silence after ${after} event(s), no FIN (half-open)`;
      case "429":
        rule(server.inject({
          verb: "watch",
          resource: "configmaps",
          fault: { kind: "status", code: 429, retryAfterSeconds: 1 },
        }));
        return "429 Too Many Requests with Retry-After: 1";
      case "outage":
        this.#outage(kind);
        return `API server down for ${OUTAGE_MS / 1000}s: connections refused, then back as it was`;
    }
  }

  /** Down now, up after {@linkcode OUTAGE_MS}; `beforeUp` runs just before it listens again. */
  #outage(kind: DemoFaultKind, beforeUp?: () => void): void {
    this.#down = true;
    this.#injected.push({ kind });
    this.#pending = this.#pending.then(() => this.#server.goDown()).catch(() => {});
    this.#outageTimer = this.#clock.setTimeout(() => {
      this.#outageTimer = undefined;
      beforeUp?.();
      this.#comeUp();
    }, OUTAGE_MS);
  }

  /**
   * Ends the outage: from now on the schedule may start another (so the
   * order of the faults depends on the clock only); the server listens
   * again once its pending stop finished.
   */
  #comeUp(): void {
    this.#down = false;
    this.#pending = this.#pending.then(() => this.#server.comeUp()).catch(() => {}); // a closed server stays down
  }
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
