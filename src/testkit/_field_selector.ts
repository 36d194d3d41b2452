/**
 * Field selectors over the fields every resource supports:
 * `metadata.name` and `metadata.namespace`, with `=`, `==` and `!=`.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { SelectorError } from "./_label_selector.ts";

const FIELDS: Record<string, (obj: KubeObject) => string> = {
  "metadata.name": (obj) => obj.metadata.name ?? "",
  "metadata.namespace": (obj) => obj.metadata.namespace ?? "",
};

/** Parses a field selector into a predicate; `""` matches everything. Unknown fields throw. */
export function parseFieldSelector(selector: string): (obj: KubeObject) => boolean {
  const terms = selector.split(",").map((t) => t.trim()).filter(Boolean);
  const tests = terms.map((term) => {
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
    const [, field, op, value] = m;
    const read = FIELDS[field];
    if (!read) throw new SelectorError(`field label not supported: ${field}`);
    return op === "!="
      ? (obj: KubeObject) => read(obj) !== value
      : (obj: KubeObject) => read(obj) === value;
  });
  return (obj) => tests.every((t) => t(obj));
}
