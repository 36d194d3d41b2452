import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KeyError } from "../../src/cache/key_error.ts";

test("KeyError is an Error named KeyError that keeps its cause", () => {
  const cause = new Error("inner");
  const err = new KeyError("cannot compute a key", { cause });
  assert.ok(err instanceof Error);
  assert.ok(err instanceof KeyError);
  assert.equal(err.name, "KeyError");
  assert.equal(err.message, "cannot compute a key");
  assert.equal(err.cause, cause);
});
