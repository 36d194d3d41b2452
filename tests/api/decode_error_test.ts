import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { DecodeError } from "../../src/api/decode_error.ts";
import { WatchDecodeError } from "../../src/api/errors.ts";
import { ListDecodeError } from "../../src/api/list_decode_error.ts";
import { decodeListStream } from "../../src/transport/list_stream.ts";
import { watchStream } from "../../src/transport/watch_stream.ts";
import * as mod from "../../mod.ts";

const body = (text: string) => new Response(text).body!;

test("a bad list body and a bad watch line are both DecodeErrors, each still its own class with its own fields", async () => {
  const list = await decodeListStream(body('{"items": [1, 2')).catch((e) => e);
  const watch = await watchStream(body("<html>\n")).next().catch((e) => e);
  for (
    const [err, own, other] of [
      [list, ListDecodeError, WatchDecodeError],
      [watch, WatchDecodeError, ListDecodeError],
    ] as const
  ) {
    assert.ok(err instanceof DecodeError && err instanceof Error, String(err));
    assert.ok(err instanceof own, String(err));
    assert.ok(!(err instanceof other), String(err));
    assert.equal(err.name, own.name);
  }
  assert.equal(list.problem, "truncated");
  assert.equal(list.items, 1);
  assert.equal(watch.problem, "syntax");
  assert.equal(watch.line, 1);
  assert.ok(
    !list.message.includes("[1, 2") && !watch.message.includes("html"),
    "content never quoted",
  );
});

test("mod.ts exports the base and both decode errors", () => {
  assert.equal(mod.DecodeError, DecodeError);
  assert.equal(mod.ListDecodeError, ListDecodeError);
  assert.equal(mod.WatchDecodeError, WatchDecodeError);
});
