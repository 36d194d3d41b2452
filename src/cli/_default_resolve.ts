/**
 * The commands' resolver: the server's discovery (cached per client),
 * kubectl's names, refused verbs (see `discover`).
 *
 * @module
 */
import { discover } from "../discovery/discover.ts";
import type { ResolveResource } from "./_target.ts";

/** Resolves through `discover(client).resolve(name, { verb })`. */
export const defaultResolve: ResolveResource = async (client, name, options) => {
  const api = await discover(client, { signal: options.signal });
  return await api.resolve(name, options);
};
