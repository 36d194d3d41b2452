/**
 * Rendezvous (highest random weight) hashing: each key goes to the member
 * whose weight for that key is highest. Adding a member moves to it only
 * the keys it now wins, and removing one moves only its own keys: every
 * other key keeps its owner, since the weights of the other members for
 * it do not change.
 *
 * The weights are the same in every process and runtime (replicas must
 * agree without talking): FNV-1a over the UTF-8 bytes of the key and of
 * the member, each finished with murmur3's 32-bit finalizer, combined by
 * XOR and finished again. A tie (two members with equal weights) goes to
 * the member whose name sorts first.
 *
 * @module
 */

/** FNV-1a (32 bits) over the UTF-8 bytes of `s`, starting from `seed`. */
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  const byte = (b: number) => {
    h = Math.imul(h ^ b, 0x01000193);
  };
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate: as TextEncoder writes it
    if (c < 0x80) byte(c);
    else if (c < 0x800) {
      byte(0xc0 | (c >> 6));
      byte(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      byte(0xe0 | (c >> 12));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    } else {
      byte(0xf0 | (c >> 18));
      byte(0x80 | ((c >> 12) & 0x3f));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    }
  }
  return h >>> 0;
}

/** murmur3's 32-bit finalizer: every input bit flips about half the output bits. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A member's weight for a key whose hash is `keyHash` (both from {@linkcode fnv1a} then {@linkcode fmix32}). */
function weight(memberHash: number, keyHash: number): number {
  return fmix32((memberHash ^ keyHash) >>> 0);
}

/** The members of the last call and their hashes (the same members are asked again and again). */
let lastMembers: string[] = [];
let lastHashes: number[] = [];

/**
 * The member that owns `key`: the one with the highest weight for it
 * (ties: the name that sorts first); `undefined` when there are no
 * members. Deterministic across processes and runtimes.
 */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  if (!sameMembers(members)) {
    lastMembers = [...members];
    lastHashes = lastMembers.map((m) => fmix32(fnv1a(m)));
  }
  const hashes = lastHashes;
  const k = fmix32(fnv1a(key));
  let best: string | undefined;
  let bestWeight = -1;
  for (let i = 0; i < members.length; i++) {
    const w = weight(hashes[i], k);
    const m = members[i];
    if (w > bestWeight || (w === bestWeight && best !== undefined && m < best)) {
      best = m;
      bestWeight = w;
    }
  }
  return best;
}

function sameMembers(members: readonly string[]): boolean {
  if (members.length !== lastMembers.length) return false;
  for (let i = 0; i < members.length; i++) if (members[i] !== lastMembers[i]) return false;
  return true;
}
