/**
 * kubectl's resolution of a resource argument (`po`, `deployments.apps`,
 * `Deployment.v1.apps`...) against the discovered resources.
 *
 * @module
 */
import type { ApiResource } from "./api_resource.ts";

interface Candidate {
  name: string;
  group?: string;
  version?: string;
}

/**
 * How kubectl reads `input`: `a.b.c...` is first resource `a`, version `b`
 * in group `c...`, then resource `a` in group `b.c...`; `a.b` is resource
 * `a` in group `b`; `a` is any resource named `a`.
 */
function candidatesOf(input: string): Candidate[] {
  const parts = input.split(".");
  const [name] = parts;
  if (parts.length === 1) return [{ name }];
  const grouped = { name, group: parts.slice(1).join(".") };
  if (parts.length === 2) return [grouped];
  return [{ name, version: parts[1], group: parts.slice(2).join(".") }, grouped];
}

function inScope(res: ApiResource, c: Candidate): boolean {
  return (c.group === undefined || res.group === c.group) &&
    (c.version === undefined || res.version === c.version);
}

/**
 * The resource `input` names, as kubectl resolves it, or undefined.
 * `resources` must be in priority order (the core group first, then the
 * groups as the server lists them, each group's preferred version first):
 * the first match wins. Tried in order, each for the fully qualified
 * reading (`deployments.v1.apps`) and then the group-qualified one
 * (`deployments.apps`): a plural or singular name (any case), then a short
 * name (exact names anywhere win over short names, as kubectl's shortcut
 * expander has it); then, the same readings as a kind (`Deployment.apps`,
 * `deployment`: any case).
 */
export function findResource(
  resources: readonly ApiResource[],
  input: string,
): ApiResource | undefined {
  if (typeof input !== "string" || input === "" || /\s/.test(input)) return undefined;
  const candidates = candidatesOf(input);
  for (const c of candidates) {
    const name = c.name.toLowerCase();
    const exact = resources.find((r) =>
      inScope(r, c) && (r.resource === name || r.singular === name)
    );
    if (exact) return exact;
    const short = resources.find((r) => inScope(r, c) && r.shortNames.includes(name));
    if (short) return short;
  }
  for (const c of candidates) {
    const kind = c.name.toLowerCase();
    const byKind = resources.find((r) => inScope(r, c) && r.kind.toLowerCase() === kind);
    if (byKind) return byKind;
  }
  return undefined;
}
