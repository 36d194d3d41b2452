/**
 * A default identity for this process, in Leases and Events.
 *
 * @module
 */
import { unit } from "../async/_async.ts";

/**
 * The hostname where the runtime tells it (cut to 119 characters), `_`, and
 * 8 random hex digits: unique per process, never a secret.
 */
export function processIdentity(random: () => number): string {
  const g = globalThis as {
    Deno?: { hostname?: () => string };
    process?: { env?: Record<string, string | undefined> };
  };
  let host = "";
  try {
    host = g.Deno?.hostname?.() ?? g.process?.env?.HOSTNAME ?? "";
  } catch { /* no permission to read it: the random part alone */ }
  const suffix = Array.from(
    { length: 8 },
    () => Math.min(15, Math.floor(unit(random()) * 16)).toString(16),
  ).join("");
  return host ? `${host.slice(0, 119)}_${suffix}` : suffix;
}
