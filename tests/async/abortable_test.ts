import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { abortable, abortableForEach } from "../../src/async/_abortable.ts";

const never = <T>() => new Promise<T>(() => {});

/** A signal that counts its abort listeners. */
function countedSignal(): { ac: AbortController; listeners: () => number } {
  const ac = new AbortController();
  let count = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  const remove = ac.signal.removeEventListener.bind(ac.signal);
  ac.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    count++;
    add(...args);
  }) as typeof add;
  ac.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    count--;
    remove(...args);
  }) as typeof remove;
  return { ac, listeners: () => count };
}

test("abortable rejects with the abort reason while the work never settles, and leaves no listener", async () => {
  const { ac, listeners } = countedSignal();
  const pending = abortable(never<string>(), ac.signal);
  assert.equal(listeners(), 1);
  ac.abort(new Error("stop waiting"));
  await assert.rejects(pending, /stop waiting/);
  const settled = countedSignal();
  assert.equal(await abortable(Promise.resolve(7), settled.ac.signal), 7);
  await assert.rejects(abortable(Promise.reject(new Error("own")), settled.ac.signal), /own/);
  assert.equal(settled.listeners(), 0);
  const aborted = new AbortController();
  aborted.abort(new Error("already"));
  await assert.rejects(abortable(7, aborted.signal), /already/);
});

test("abortable hands a value that comes after the abort to dispose, and swallows a late rejection", async () => {
  const ac = new AbortController();
  let deliver!: (v: string) => void;
  const disposed: string[] = [];
  const pending = abortable(new Promise<string>((r) => (deliver = r)), ac.signal, {
    dispose: (v) => void disposed.push(v),
  });
  ac.abort(new Error("gone"));
  await assert.rejects(pending, /gone/);
  deliver("file handle");
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(disposed, ["file handle"]);
  // a late rejection and a throwing dispose reach nobody (no unhandled rejection)
  let fail!: (e: Error) => void;
  const late = abortable(new Promise<string>((_, r) => (fail = r)), ac.signal, {
    dispose: () => {
      throw new Error("dispose failed");
    },
  });
  await assert.rejects(late, /gone/);
  fail(new Error("late"));
  await new Promise((r) => setTimeout(r, 0));
});

/** An iterator that yields `values`, then never answers; records `return()` calls. */
function stalling(values: number[]) {
  const log: string[] = [];
  let i = 0;
  const iterator: AsyncIterableIterator<number> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      log.push("next");
      return i < values.length ? Promise.resolve({ done: false, value: values[i++] }) : never();
    },
    return() {
      log.push("return");
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return { iterator, log };
}

test("abortableForEach hands on each value and ends with the iterator", async () => {
  const seen: number[] = [];
  await abortableForEach(
    (async function* () {
      yield* [1, 2, 3];
    })(),
    undefined,
    (v) => void seen.push(v),
  );
  assert.deepEqual(seen, [1, 2, 3]);
});

test("abortableForEach rejects with the abort reason while a next() never answers, and starts the iterator's return()", async () => {
  const { iterator, log } = stalling([1]);
  const ac = new AbortController();
  const seen: number[] = [];
  const pending = abortableForEach(iterator, ac.signal, (v) => void seen.push(v));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(seen, [1]);
  ac.abort(new Error("stop reading"));
  await assert.rejects(pending, /stop reading/);
  assert.deepEqual(log, ["next", "next", "return"]);
});

test("abortableForEach releases the iterator when the signal aborted before the first step, without calling next()", async () => {
  const { iterator, log } = stalling([1]);
  const ac = new AbortController();
  ac.abort(new Error("too late"));
  await assert.rejects(abortableForEach(iterator, ac.signal, () => {}), /too late/);
  assert.deepEqual(log, ["return"]);
});

test("abortableForEach releases the iterator when the consumer throws, and rethrows", async () => {
  const { iterator, log } = stalling([1, 2]);
  const failure = new Error("bad chunk");
  await assert.rejects(
    abortableForEach(iterator, new AbortController().signal, () => {
      throw failure;
    }),
    (err) => err === failure,
  );
  assert.deepEqual(log, ["next", "return"]);
});
