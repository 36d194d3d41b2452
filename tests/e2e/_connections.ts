/**
 * This process's TCP connections, counted by the kernel rather than by the
 * library: on Linux, the socket inodes behind `/proc/self/fd` (each link
 * reads `socket:[inode]`) matched against the ESTABLISHED entries of
 * `/proc/net/tcp` and `/proc/net/tcp6`. The server side of a loopback
 * connection (another process's socket, here kube-apiserver's) is in those
 * tables too, but not among this process's descriptors, so it is not
 * counted.
 *
 * Deno lets a program read /proc only with `--allow-all` (since 1.43), and
 * the suite runs with `--allow-read --allow-run`: there a `sh` child reads
 * this process's /proc entries (`/proc/<pid>/fd`, the same network
 * namespace's tables) and prints them; Node reads them directly.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import process from "node:process";

/** One row of `/proc/net/tcp{,6}`. */
export interface TcpEntry {
  /** Local address as written (`127.0.0.1`, or the IPv6 address in 8 hex groups). */
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  /** The kernel's state: `"ESTABLISHED"`, `"LISTEN"`, ... (`"0x0C"` for a state not named here). */
  state: string;
  /** The socket's inode (0 for a socket no longer owned, e.g. in TIME_WAIT). */
  inode: number;
}

const STATES: Record<number, string> = {
  0x01: "ESTABLISHED",
  0x02: "SYN_SENT",
  0x03: "SYN_RECV",
  0x04: "FIN_WAIT1",
  0x05: "FIN_WAIT2",
  0x06: "TIME_WAIT",
  0x07: "CLOSE",
  0x08: "CLOSE_WAIT",
  0x09: "LAST_ACK",
  0x0a: "LISTEN",
  0x0b: "CLOSING",
};

/**
 * Decodes an address of `/proc/net/tcp{,6}`: 32-bit words in host byte
 * order (little-endian on x86 and arm64) as 8 or 32 hex digits.
 */
export function decodeAddress(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(parseInt(word.slice(b, b + 2), 16));
  }
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(":");
}

/** Parses the text of `/proc/net/tcp` or `/proc/net/tcp6` (the header line skipped). */
export function parseProcNetTcp(text: string): TcpEntry[] {
  const entries: TcpEntry[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [local, remote] = [f[1], f[2]].map((a) => a.split(":"));
    const state = parseInt(f[3], 16);
    entries.push({
      localAddress: decodeAddress(local[0]),
      localPort: parseInt(local[1], 16),
      remoteAddress: decodeAddress(remote[0]),
      remotePort: parseInt(remote[1], 16),
      state: STATES[state] ?? `0x${f[3]}`,
      inode: Number(f[9]),
    });
  }
  return entries;
}

/** The socket inode of a `/proc/<pid>/fd` link target (`socket:[1234]`), or undefined for anything else. */
export function socketInode(link: string): number | undefined {
  const m = /^socket:\[(\d+)\]$/.exec(link);
  return m ? Number(m[1]) : undefined;
}

/** Whether this machine can count (Linux, with /proc mounted). */
export function canCountConnections(): boolean {
  return process.platform === "linux";
}

/** What the kernel says now: this process's descriptor link targets, and the TCP tables' text. */
interface Snapshot {
  fdLinks: string[];
  tables: string[];
}

const onDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
const MARK = "--- kube-reflector tcp table ---";

function snapshot(): Snapshot {
  if (onDeno) {
    // $0: this process's pid. A descriptor closed between the glob and readlink prints nothing.
    const script = `for f in /proc/$0/fd/*; do readlink "$f"; done; ` +
      `for t in /proc/net/tcp /proc/net/tcp6; do echo "${MARK}"; cat "$t" 2>/dev/null; done`;
    const out = execFileSync("sh", ["-c", script, String(process.pid)], { encoding: "utf8" });
    const [links, ...tables] = out.split(`${MARK}\n`);
    return { fdLinks: links.split("\n").filter(Boolean), tables };
  }
  const fdLinks: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      fdLinks.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // closed between the listing and the read (or the listing's own descriptor)
    }
  }
  const tables = ["/proc/net/tcp", "/proc/net/tcp6"]
    .filter((t) => existsSync(t))
    .map((t) => readFileSync(t, "utf8"));
  return { fdLinks, tables };
}

function inodesOf(links: string[]): Set<number> {
  const inodes = new Set<number>();
  for (const link of links) {
    const inode = socketInode(link);
    if (inode !== undefined) inodes.add(inode);
  }
  return inodes;
}

/** The inodes of every socket this process holds a descriptor to now. */
export function ownSocketInodes(): Set<number> {
  return inodesOf(snapshot().fdLinks);
}

/**
 * This process's ESTABLISHED TCP connections whose remote port is `port`
 * (IPv4 and IPv6), from the kernel's tables.
 */
export function ownConnectionsTo(port: number): TcpEntry[] {
  const { fdLinks, tables } = snapshot();
  const own = inodesOf(fdLinks);
  return tables.flatMap(parseProcNetTcp)
    .filter((e) => e.state === "ESTABLISHED" && e.remotePort === port && own.has(e.inode));
}
