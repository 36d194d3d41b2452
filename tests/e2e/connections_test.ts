import assert from "node:assert/strict";
import { connect, createServer, type Socket } from "node:net";
import { test } from "../_test.ts";
import {
  canCountConnections,
  decodeAddress,
  ownConnectionsTo,
  parseProcNetTcp,
  socketInode,
} from "./_connections.ts";

test("/proc/net/tcp rows: addresses, ports, state and inode", () => {
  const tcp = [
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 307 1 000000008bd94d42 100 0 0 10 0",
    "   1: 0100007F:A79F 0100007F:1A0A 01 00000000:00000000 00:00000000 00000000  1000        0 48213 1 0000000000000000 20 4 30 10 -1",
    "   2: 0100007F:A7A0 0100007F:1A0A 06 00000000:00000000 03:0000002E 00000000     0        0 0 3 00000000bd7d7dd8",
    "",
  ].join("\n");
  assert.deepEqual(parseProcNetTcp(tcp), [
    {
      localAddress: "0.0.0.0",
      localPort: 2024,
      remoteAddress: "0.0.0.0",
      remotePort: 0,
      state: "LISTEN",
      inode: 307,
    },
    {
      localAddress: "127.0.0.1",
      localPort: 0xa79f,
      remoteAddress: "127.0.0.1",
      remotePort: 6666,
      state: "ESTABLISHED",
      inode: 48213,
    },
    {
      localAddress: "127.0.0.1",
      localPort: 0xa7a0,
      remoteAddress: "127.0.0.1",
      remotePort: 6666,
      state: "TIME_WAIT",
      inode: 0,
    },
  ]);
  const tcp6 = [
    "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    "   0: 00000000000000000000000001000000:C350 00000000000000000000000001000000:1A0A 01 00000000:00000000 00:00000000 00000000     0        0 9911 1 0000000000000000 20 4 30 10 -1",
  ].join("\n");
  const [row] = parseProcNetTcp(tcp6);
  assert.equal(row.localAddress, "0:0:0:0:0:0:0:1");
  assert.equal(row.remotePort, 6666);
  assert.equal(row.inode, 9911);
});

test("addresses in host byte order and fd links", () => {
  for (
    const [hex, address] of [
      ["0100007F", "127.0.0.1"],
      ["0101A8C0", "192.168.1.1"],
      ["0000000000000000FFFF00000100007F", "0:0:0:0:0:ffff:7f00:1"],
      ["B80D0120000000000000000001000000", "2001:db8:0:0:0:0:0:1"],
    ]
  ) assert.equal(decodeAddress(hex), address, hex);
  for (
    const [link, inode] of [
      ["socket:[48213]", 48213],
      ["pipe:[48213]", undefined],
      ["/dev/null", undefined],
      ["anon_inode:[eventpoll]", undefined],
    ] as const
  ) assert.equal(socketInode(link), inode, link);
});

if (canCountConnections()) {
  test("this process's connections to a local server are counted, the server's own side is not", async () => {
    const accepted: Socket[] = [];
    const server = createServer((s) => void accepted.push(s));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const clients: Socket[] = [];
    try {
      assert.equal(ownConnectionsTo(port).length, 0);
      for (let i = 0; i < 3; i++) {
        const c = connect(port, "127.0.0.1");
        clients.push(c);
        await new Promise<void>((resolve, reject) =>
          c.once("connect", resolve).once("error", reject)
        );
      }
      await until(() => accepted.length === 3, "3 accepted");
      const own = ownConnectionsTo(port);
      assert.equal(own.length, 3, JSON.stringify(own));
      assert.deepEqual(
        own.map((e) => e.localPort).sort(),
        clients.map((c) => c.localPort).sort(),
      );
      clients[0].destroy();
      await until(() => ownConnectionsTo(port).length === 2, "2 after one closed");
    } finally {
      for (const c of clients) c.destroy();
      for (const s of accepted) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal(ownConnectionsTo(port).length, 0);
  });
}

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
