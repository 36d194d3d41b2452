/**
 * A `fetch` spread over several HTTP clients so that none carries more than
 * a budget of requests in flight, for runtimes whose client puts every
 * request to a server on one HTTP/2 connection and queues those past the
 * server's `SETTINGS_MAX_CONCURRENT_STREAMS` inside it without saying what
 * that limit is (Deno's `Deno.HttpClient`). Each client has its own
 * connection pool, so a new client is a new connection: when every client
 * is at the budget, the next request gets a new one instead of waiting
 * (a watch waiting there would wait forever).
 *
 * A request is in flight from its start until its response body is read to
 * the end, cancelled or errored, or until the request fails or its signal
 * aborts; a response without a body ends it at once. The body is handed on
 * through a pull-through `ReadableStream` (no read-ahead: HTTP/2 flow
 * control still sees the consumer's pace) that notices its end. A response
 * dropped unread is noticed when it is garbage-collected: its body is then
 * cancelled and the request counted out.
 *
 * Clients are kept until `close()` (an idle one costs no connection once
 * its pool has dropped the idle socket); requests go to the oldest client
 * with room, so short requests in sequence reuse the first one. A client's
 * first request goes alone (`gateFirst`): the others given to that client
 * wait for its answer (or failure), by which time its connection exists and
 * says what it speaks. Without that, a burst (informers starting together)
 * would have Deno's client race a TLS connection per request and close the
 * spares unused. The connection exists long before a slow answer (a list
 * at a version the server has not reached, a write behind a slow admission
 * webhook) comes, so the others wait for it `gateMs` at most.
 *
 * A client gone silent is retired: when a caller aborts a request on a
 * client from which nothing (no answer, no byte of a body) has come for
 * `silentMs` (default 30 s), as a watcher does when its idle deadline finds
 * a connection dead, or a lease renewal at its deadline, that client takes
 * no new request, is closed once its last one ends, and is forgotten. Should
 * nothing come from it for five `silentMs` after that (a new watch on a
 * quiet resource may wait two bookmark intervals for its first), what still
 * runs on it is ended (`TypeError`), as on a reset. Silence counts only
 * while something is asked of a client.
 * Deno's client has no health check of its own (no PING): without this, the
 * next try would go to the same dead connection (half-open: a NAT or load
 * balancer that dropped it) and wait again, until TCP gives up, many
 * minutes later. A live client retired so (a quiet watch its caller
 * stopped) costs one new connection.
 *
 * `close()` aborts every request still in flight, wherever it is (waiting
 * for its turn, for its answer, or with its body being read), then closes
 * the clients: closing a `Deno.HttpClient` alone does not end the requests
 * already running on it.
 *
 * @module
 */

import { type Clock, systemClock } from "../async/clock.ts";
import { withBody } from "./_with_body.ts";

/**
 * The client the next request goes to: the index of the first (oldest)
 * client not retired with fewer than `budget` requests in flight, or `-1`
 * when every one is at the budget or retired (a new client is due).
 */
export function pickClient(
  inFlight: readonly number[],
  budget: number,
  retired: readonly boolean[] = [],
): number {
  for (let i = 0; i < inFlight.length; i++) if (inFlight[i] < budget && !retired[i]) return i;
  return -1;
}

/** How {@linkcode streamBudgetFetch} makes, uses and closes clients. */
export interface StreamBudgetOptions<C> {
  /** Requests in flight per client at most (a whole number >= 1). */
  budget: number;
  /** Makes a client (with its own connection pool). */
  createClient(): C;
  /** Sends one request with `client`. */
  send(client: C, input: RequestInfo | URL, init: RequestInit | undefined): Promise<Response>;
  /** Closes a client (its pending requests fail). */
  closeClient(client: C): void;
  /** The first client, already made (its creation is where bad TLS material fails). Default: made on first use. */
  first?: C;
  /** A client's first request goes alone, the others wait for its answer (see above). Default: true. */
  gateFirst?: boolean;
  /** How long the others wait for that first answer at most, in ms. Default: 1000. */
  gateMs?: number;
  /** Silence (ms) after which a caller's abort retires a client (see above); `Infinity`: never. Default: 30000. */
  silentMs?: number;
  /** The clock (the gate's wait, silences). Default: the system's. */
  clock?: Clock;
}

/** A budgeted `fetch` and its clients. */
export interface StreamBudgetFetch {
  /** The `fetch`. After `close()` it rejects with a `TypeError`. */
  fetch: typeof fetch;
  /** Requests in flight per client, oldest client first (a copy). */
  inFlight(): number[];
  /** Aborts every request in flight, then closes every client. Idempotent. */
  close(): void;
}

/** What the collector needs to count out a response dropped unread: no reference to the body handed on. */
interface Held {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  release: () => void;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

const dropped = new FinalizationRegistry<Held>((held) => {
  held.release();
  held.reader.cancel().catch(() => {});
});

/** Spreads requests over clients made by `options.createClient`, at most `options.budget` in flight on each. */
export function streamBudgetFetch<C>(options: StreamBudgetOptions<C>): StreamBudgetFetch {
  const {
    budget,
    createClient,
    send,
    closeClient,
    gateFirst = true,
    gateMs = 1_000,
    silentMs = 30_000,
    clock = systemClock,
  } = options;
  const slots: Slot<C>[] = [];
  const newSlot = (client: C): Slot<C> => {
    const slot: Slot<C> = {
      client,
      count: 0,
      firstAnswer: undefined,
      heard: clock.now(),
      unanswered: false,
      idleSince: clock.now(),
      retired: false,
      retiredAt: 0,
      shut: false,
      live: new Set(),
    };
    slots.push(slot);
    return slot;
  };
  if (options.first !== undefined) newSlot(options.first);
  let closed = false;

  /** Closes `slot`'s client, once, and forgets it. */
  const shutDown = (slot: Slot<C>): void => {
    if (slot.shut) return;
    slot.shut = true;
    clock.clearTimeout(slot.grace);
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    closeClient(slot.client);
  };
  /**
   * While a retired client still carries requests: once nothing has come
   * from it for five `silentMs` since its retirement (150 s: a new watch on
   * a quiet resource may wait two bookmark intervals and more for its
   * first), they are ended as on a dead connection (else a request without
   * a deadline of its own would wait there until TCP gives up).
   */
  const watchRetired = (slot: Slot<C>): void => {
    const due = () => Math.max(slot.heard, slot.retiredAt) + 5 * silentMs;
    slot.grace = clock.setTimeout(() => {
      slot.grace = undefined;
      if (slot.shut || closed) return;
      if (clock.now() < due()) return watchRetired(slot); // heard from meanwhile
      const reason = new TypeError("fetch: the connection went silent");
      for (const ac of [...slot.live]) ac.abort(reason);
    }, Math.max(0, due() - clock.now()));
  };
  const retire = (slot: Slot<C>): void => {
    if (slot.retired) return;
    slot.retired = true;
    slot.retiredAt = clock.now();
    if (slot.count === 0) shutDown(slot);
    else if (Number.isFinite(silentMs)) watchRetired(slot);
  };

  const budgeted = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (closed) return Promise.reject(closedError());
    const i = pickClient(slots.map((x) => x.count), budget, slots.map((x) => x.retired));
    let slot: Slot<C>;
    if (i >= 0) slot = slots[i];
    else {
      try {
        slot = newSlot(createClient());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    // Silence counts only while something is asked of a client: after an idle spell it starts
    // anew, or (its last request cut unanswered by its caller: renewals cut one after another at
    // their deadlines) goes on from where it was, the idle spell left out.
    if (slot.count === 0) {
      const now = clock.now();
      slot.heard = slot.unanswered ? slot.heard + (now - slot.idleSince) : now;
    }
    slot.count++;
    let answered = false;
    const onHeard = (): void => {
      slot.heard = clock.now();
      slot.unanswered = false;
    };
    // The caller's signal as fetch takes it: init's when given (even null: none), else the Request's.
    const outer = init?.signal !== undefined
      ? init.signal
      : input instanceof Request
      ? input.signal
      : undefined;
    const ac = new AbortController();
    let byCaller = false;
    const forward = (): void => {
      byCaller = true;
      ac.abort(outer!.reason);
    };
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (--slot.count === 0) slot.idleSince = clock.now();
      slot.live.delete(ac);
      outer?.removeEventListener("abort", forward);
      ac.signal.removeEventListener("abort", release);
      if (closed) return;
      if (byCaller && !answered) slot.unanswered = true;
      // A caller that gave up on a client silent this long: a dead connection, most likely.
      if (byCaller && clock.now() - slot.heard >= silentMs) retire(slot);
      if (slot.retired && slot.count === 0) shutDown(slot);
    };
    slot.live.add(ac);
    if (outer?.aborted) ac.abort(outer.reason);
    else outer?.addEventListener("abort", forward, { once: true });
    // An abort ends the request (and its body) wherever it is.
    if (ac.signal.aborted) release();
    else ac.signal.addEventListener("abort", release, { once: true });
    const sent = { ...init, signal: ac.signal };
    const gate = gateFirst ? slot.firstAnswer : null;
    let pending: Promise<Response>;
    if (gate) {
      pending = waitOrAbort(gate, ac.signal).then(() => send(slot.client, input, sent));
    } else {
      try {
        pending = send(slot.client, input, sent);
      } catch (err) {
        pending = Promise.reject(err);
      }
      if (gate === undefined) {
        let timer: unknown;
        const answered = new Promise<void>((resolve) => {
          timer = clock.setTimeout(resolve, gateMs);
          pending.then(() => resolve(), () => resolve());
        });
        slot.firstAnswer = answered;
        answered.then(() => {
          clock.clearTimeout(timer);
          slot.firstAnswer = null;
        });
      }
    }
    return pending.then((res) => {
      answered = true;
      onHeard();
      return counted(res, release, ac.signal, onHeard);
    }, (err) => {
      release();
      throw err;
    });
  };

  return {
    fetch: budgeted as typeof fetch,
    inFlight: () => slots.map((x) => x.count),
    close() {
      if (closed) return;
      closed = true;
      const reason = closedError();
      for (const slot of [...slots]) {
        for (const ac of [...slot.live]) ac.abort(reason);
        shutDown(slot);
      }
    },
  };
}

/** One client and what is known of it. */
interface Slot<C> {
  client: C;
  /** Requests in flight on it. */
  count: number;
  /** Undefined before its first request; a promise while that one awaits its answer; null after. */
  firstAnswer: Promise<void> | null | undefined;
  /** When anything (an answer, a byte of a body) last came from it. */
  heard: number;
  /** Its last request ended by its caller before any answer came. */
  unanswered: boolean;
  /** When its last request ended (it carries none). */
  idleSince: number;
  /** Takes no new request (gone silent). */
  retired: boolean;
  /** When it was retired. */
  retiredAt: number;
  /** Closed (and forgotten). */
  shut: boolean;
  /** The controllers of its requests in flight. */
  live: Set<AbortController>;
  /** The wait after which a retired client still silent has its requests ended. */
  grace?: unknown;
}

/** What a request gets once the fetch is closed (before or while it runs). */
function closedError(): TypeError {
  return new TypeError("fetch: the connection is closed");
}

/** Resolves with `p`, or rejects with `signal.reason` once it aborts. */
function waitOrAbort(p: Promise<void>, signal: AbortSignal | null | undefined): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/**
 * `res` with a body that calls `release` once at its end (read, cancelled,
 * errored, or collected unread), `onHeard` at each read that brought
 * something, and that fails with `signal`'s reason once it aborts (whatever
 * the runtime's own body does on that abort).
 */
function counted(
  res: Response,
  release: () => void,
  signal: AbortSignal,
  onHeard: () => void,
): Response {
  const body = res.body;
  if (body === null || NULL_BODY_STATUS.has(res.status)) {
    release();
    return res;
  }
  if (res.status < 200 || res.status > 599) {
    // A status no Response can be made with (a proxy's 600-999): handed on as it came, counted out.
    release();
    return res;
  }
  const reader = body.getReader();
  const held: Held = { reader, release };
  let finished = false;
  // Weakly: the signal lives as long as the request is counted, the body handed on must stay collectable.
  let controllerRef: WeakRef<ReadableStreamDefaultController<Uint8Array>> | undefined;
  const onAbort = (): void => {
    if (finished) return;
    done();
    controllerRef?.deref()?.error(signal.reason);
    reader.cancel(signal.reason).catch(() => {});
  };
  const done = (): void => {
    finished = true;
    signal.removeEventListener("abort", onAbort);
    dropped.unregister(held);
    release();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controllerRef = new WeakRef(controller);
    },
    pull(controller) {
      return reader.read().then((r) => {
        if (finished) return;
        onHeard();
        if (r.done) {
          done();
          controller.close();
        } else controller.enqueue(r.value);
      }, (err) => {
        if (finished) return;
        done();
        controller.error(err);
      });
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  dropped.register(stream, held, held);
  return withBody(res, stream);
}
