/**
 * JSON encoding the way kube-apiserver 1.20 writes it.
 *
 * - Compact (what every program gets): one line, HTML characters escaped as
 *   Go's encoder does (`<` is `\u003c`...), then `\n`.
 * - Pretty (what `curl`, `Wget`, browsers and `?pretty=true` get): two-space indent,
 *   no trailing newline, and the json-iterator quirks visible in the
 *   recorded fixtures: an empty object is `{`, an indented blank line, `}`;
 *   `fieldsV1` (a raw message) stays compact.
 *
 * @module
 */

const GO_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** Replaces the characters Go's JSON encoder escapes (they only occur inside strings). */
function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]);
}

/** Compact JSON followed by a newline, as Go's `json.Encoder` writes it. */
export function compactJson(value: unknown): string {
  return goEscape(JSON.stringify(value)) + "\n";
}

/** Indented JSON as kube-apiserver writes it for `?pretty=true` or a curl client. */
export function prettyJson(value: unknown): string {
  return goEscape(indent(value, 0));
}

/** Encodes pretty or compact. */
export function encodeJson(value: unknown, pretty: boolean): string {
  return pretty ? prettyJson(value) : compactJson(value);
}

function pad(depth: number): string {
  return "  ".repeat(depth);
}

function indent(value: unknown, depth: number): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((v) => pad(depth + 1) + indent(v ?? null, depth + 1));
    return `[\n${items.join(",\n")}\n${pad(depth)}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return `{\n${pad(depth + 1)}\n${pad(depth)}}`;
  const lines = entries.map(([k, v]) => {
    const encoded = k === "fieldsV1" ? JSON.stringify(v) : indent(v, depth + 1);
    return `${pad(depth + 1)}${JSON.stringify(k)}: ${encoded}`;
  });
  return `{\n${lines.join(",\n")}\n${pad(depth)}}`;
}

/**
 * True when kube-apiserver would pretty-print for this request: a `pretty`
 * query parameter that parses as true, else a user agent starting with
 * `curl`, `Wget` or `Mozilla/5.0` (its `isPrettyPrint`).
 */
export function wantsPretty(query: URLSearchParams, userAgent: string | undefined): boolean {
  const p = query.get("pretty");
  if (p) return ["1", "t", "T", "true", "TRUE", "True"].includes(p);
  const ua = userAgent ?? "";
  return ua.startsWith("curl") || ua.startsWith("Wget") || ua.startsWith("Mozilla/5.0");
}
