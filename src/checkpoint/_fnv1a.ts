/**
 * The checksum of checkpoints and split values: FNV-1a (32 bits) in four
 * interleaved lanes (byte `i` of the input goes to lane `i % 4`), written
 * as the four lanes' 8 hexadecimal digits each, lane 0 first (32 digits).
 * Four lanes run about four times faster than one (no chain of dependent
 * multiplications) and give 128 bits. Not a defence against someone who
 * can write the storage (nothing without a key is), but a cheap and
 * certain catch of accidental damage: changing any single byte always
 * changes the checksum (each step of a lane is a bijection of its state),
 * and other damage goes unseen only by a very unlikely accident.
 *
 * @module
 */

const INIT = 0x811c9dc5 | 0;
const PRIME = 0x01000193;
// Bound once: a global looked up per byte is slow where globals are slow
// (edge-runtime runs code in a node:vm context: 10x the cost per request).
const imul = Math.imul;

/** An incremental 4-lane FNV-1a over bytes. */
export class Fnv1a4 {
  #lanes = [INIT, INIT, INIT, INIT];
  #position = 0;

  /** Continues the checksum over `bytes`. */
  update(bytes: Uint8Array): void {
    const lanes = this.#lanes;
    const s = this.#position & 3;
    // a, b, c, d: the lanes of bytes 0, 1, 2, 3 (mod 4) of this call
    let a = lanes[s];
    let b = lanes[(s + 1) & 3];
    let c = lanes[(s + 2) & 3];
    let d = lanes[(s + 3) & 3];
    const n = bytes.length;
    const end = n - (n & 3);
    let i = 0;
    for (; i < end; i += 4) {
      a = imul(a ^ bytes[i], PRIME);
      b = imul(b ^ bytes[i + 1], PRIME);
      c = imul(c ^ bytes[i + 2], PRIME);
      d = imul(d ^ bytes[i + 3], PRIME);
    }
    if (i < n) a = imul(a ^ bytes[i++], PRIME);
    if (i < n) b = imul(b ^ bytes[i++], PRIME);
    if (i < n) c = imul(c ^ bytes[i], PRIME);
    lanes[s] = a;
    lanes[(s + 1) & 3] = b;
    lanes[(s + 2) & 3] = c;
    lanes[(s + 3) & 3] = d;
    this.#position += n;
  }

  /** The checksum so far: 32 hexadecimal digits. */
  digest(): string {
    return this.#lanes.map((h) => (h >>> 0).toString(16).padStart(8, "0")).join("");
  }
}
