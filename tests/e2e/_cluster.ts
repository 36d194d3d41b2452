/**
 * A real Kubernetes API server for end-to-end tests: etcd and
 * kube-apiserver, 1.20.2 or the current release (built by
 * scripts/kube_apiserver/build.sh and build_current.sh), on
 * loopback ports, a fresh PKI, a token file, a client CA, kubeconfigs for a
 * token, a client certificate and `kubectl proxy`. Every process is killed
 * and awaited in `stop()`, so Deno's sanitizers stay satisfied.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { createPki, type Pki } from "../kubeconfig/_pki.ts";
import { kubeconfig, writeConfig } from "../kubeconfig/_helpers.ts";
import { test } from "../_test.ts";
import { eventually, Fatal, freePort, Proc } from "./_process.ts";

export { eventually, Fatal } from "./_process.ts";
import { type KubeConnection, loadKubeConfig } from "../../kubeconfig.ts";

const HOME = process.env.HOME ?? "/root";
const CACHE = process.env.KUBE_REFLECTOR_CACHE ?? `${HOME}/.cache/kube-reflector`;
const CURRENT = process.env.KUBE_CURRENT_VERSION ?? "1.37.2";
const CURRENT_ETCD = process.env.KUBE_CURRENT_ETCD_VERSION ?? "3.6.16";

/** One Kubernetes release the e2e suite runs against, and its binaries. */
export interface Release {
  /** `"1.20"` or the current minor (`"1.37"`): names the test variant. */
  name: string;
  /** The full version, as `/version` reports it. */
  version: string;
  /** The newest release built by scripts/kube_apiserver/build_current.sh (streaming lists, periodic bookmarks...). */
  current: boolean;
  apiserver: string;
  kubectl: string;
  etcd: string;
}

/**
 * The matrix: kube-apiserver 1.20.2 (Debian's source, Debian's etcd 3.4 and
 * kubectl 1.20) and the current release (Go modules: kube-apiserver, kubectl,
 * etcd 3.6). Binaries can be overridden with `KUBE_APISERVER_BIN`,
 * `KUBECTL_BIN`, `ETCD_BIN` (1.20) and `KUBE_CURRENT_VERSION` (current).
 */
export const RELEASES: readonly Release[] = [
  {
    name: "1.20",
    version: "1.20.2",
    current: false,
    apiserver: process.env.KUBE_APISERVER_BIN ?? `${CACHE}/kube-apiserver-1.20.2`,
    kubectl: process.env.KUBECTL_BIN ?? `${CACHE}/kubectl-1.20.2`,
    etcd: process.env.ETCD_BIN ?? "/usr/bin/etcd",
  },
  {
    name: CURRENT.split(".").slice(0, 2).join("."),
    version: CURRENT,
    current: true,
    apiserver: `${CACHE}/kube-apiserver-${CURRENT}`,
    kubectl: `${CACHE}/kubectl-${CURRENT}`,
    etcd: `${CACHE}/etcd-${CURRENT_ETCD}`,
  },
];

/** Why the e2e tests of `release` cannot run here, or undefined when they can. */
export function unavailable(release: Release): string | undefined {
  for (
    const [what, path] of [
      ["kube-apiserver", release.apiserver],
      ["kubectl", release.kubectl],
      ["etcd", release.etcd],
    ]
  ) {
    if (!existsSync(path)) {
      return `${what} not found at ${path} (run scripts/kube_apiserver/ensure.sh)`;
    }
  }
  return undefined;
}

/**
 * Registers an e2e test once per release (`[kube-apiserver 1.20] name`,
 * `[kube-apiserver 1.37] name`), or only for the releases `only` names
 * (`"current"`: a feature 1.20 lacks; `"legacy"`: a 1.20-only behaviour),
 * each visibly skipped when its binaries are missing.
 */
export function e2eTest(
  name: string,
  fn: (release: Release) => Promise<void>,
  options: {
    only?: "current" | "legacy";
    /** Run on Deno only, for this reason (a long test of runtime-independent behaviour: once is enough). */
    denoOnly?: string;
  } = {},
): void {
  for (const release of RELEASES) {
    if (options.only === "current" && !release.current) continue;
    if (options.only === "legacy" && release.current) continue;
    const full = `[kube-apiserver ${release.name}] ${name}`;
    const onDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
    const why = options.denoOnly && !onDeno
      ? `runs on Deno only: ${options.denoOnly}`
      : unavailable(release);
    if (why) test(`${full} [SKIPPED: ${why}]`, () => console.warn(`e2e skipped: ${why}`));
    else test(full, () => fn(release));
  }
}

/** Options of {@linkcode startCluster}. */
export interface ClusterOptions {
  /** Which release to run. Default: the first of {@linkcode RELEASES} (1.20). */
  release?: Release;
  /** Extra kube-apiserver flags (e.g. `--feature-gates=WatchList=false`). Default: none. */
  apiserverArgs?: string[];
  /** Serve watches from etcd directly (`--watch-cache=false`). Default: `false`. */
  noWatchCache?: boolean;
  /** Also start `kubectl proxy`. Default: `false`. */
  proxy?: boolean;
  /** More users: token → user name (no groups, unlike the reflector's `system:masters` token). Default: none. */
  users?: Record<string, string>;
}

/** A running cluster. */
export interface Cluster {
  dir: string;
  pki: Pki;
  server: string;
  /** Kubeconfig paths: bearer token from a tokenFile, client certificate, kubectl proxy (plain HTTP). */
  kubeconfigs: { token: string; cert: string; proxy?: string };
  /** The file the token kubeconfig's `tokenFile` points at. */
  clientTokenFile: string;
  /** Admin connection (client certificate). */
  admin: KubeConnection;
  /** Replaces the API server's accepted reflector token (the admin certificate keeps working). */
  setServerToken(token: string): Promise<void>;
  /** Kills the API server, waits, and starts it again (new token file contents apply). */
  restartApiserver(options?: { downMs?: number }): Promise<void>;
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  stopProxy(): Promise<void>;
  startProxy(): Promise<void>;
  /** The last lines kube-apiserver wrote (for a failing test's message). */
  apiserverLog(): string;
  /** Compacts etcd at its current revision; returns it. */
  compactEtcd(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts etcd, kube-apiserver (and kubectl proxy); `stop()` it in `finally`.
 * Ports are checked free just before the processes start: should another
 * process take one in between (the child then exits with "address already in
 * use"), the whole cluster starts again on other ports, up to three times.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  for (let attempt = 1;; attempt++) {
    try {
      return await startClusterOnce(options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (attempt >= 3 || !/address already in use/.test(message)) throw err;
      console.warn(
        `e2e: a port was taken while the cluster started; again (${message.split("\n")[0]})`,
      );
    }
  }
}

async function startClusterOnce(options: ClusterOptions): Promise<Cluster> {
  const release = options.release ?? RELEASES[0];
  const pki = await createPki();
  const dir = pki.dir;
  const procs: { etcd?: Proc; apiserver?: Proc; proxy?: Proc } = {};
  let admin: KubeConnection | undefined;
  const stop = async () => {
    await admin?.close();
    for (const p of [procs.proxy, procs.apiserver, procs.etcd]) await p?.stop();
    await pki.cleanup();
  };
  try {
    const [etcdPort, peerPort, apiPort, proxyPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    procs.etcd = new Proc("etcd", release.etcd, [
      "--data-dir",
      join(dir, "etcd"),
      "--listen-client-urls",
      etcdUrl,
      "--advertise-client-urls",
      etcdUrl,
      "--listen-peer-urls",
      peerUrl,
      "--initial-advertise-peer-urls",
      peerUrl,
      "--initial-cluster",
      `default=${peerUrl}`,
    ]);
    const etcd = procs.etcd;
    await eventually(
      async () => {
        if (!etcd.running) throw new Fatal(`etcd exited:\n${etcd.tail.join("").slice(-3000)}`);
        return (await fetch(`${etcdUrl}/health`).then((r) => r.json())).health === "true";
      },
      "etcd health",
      20_000,
    );

    await new Promise<void>((resolve, reject) =>
      spawn("openssl", ["genrsa", "-out", join(dir, "sa.key"), "2048"], { stdio: "ignore" })
        .on(
          "close",
          (code) => (code === 0 ? resolve() : reject(new Error("openssl genrsa failed"))),
        )
    );
    const tokens = join(dir, "tokens.csv");
    const clientTokenFile = join(dir, "client-token");
    const users = Object.entries(options.users ?? {})
      .map(([token, user], i) => `${token},${user},${2001 + i}\n`).join("");
    await writeFile(tokens, `tok-initial,reflector,1001,"system:masters"\n${users}`);
    await writeFile(clientTokenFile, "tok-initial\n");
    const server = `https://127.0.0.1:${apiPort}`;
    const args = [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.server.certPath}`,
      `--tls-private-key-file=${pki.server.keyPath}`,
      `--client-ca-file=${pki.ca.certPath}`,
      `--token-auth-file=${tokens}`,
      `--service-account-key-file=${join(dir, "sa.key")}`,
      `--service-account-signing-key-file=${join(dir, "sa.key")}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      // AlwaysAllow unless the test chooses (the flag is a list: a second one would add to it)
      ...((options.apiserverArgs ?? []).some((a) => a.startsWith("--authorization-mode="))
        ? []
        : ["--authorization-mode=AlwaysAllow"]),
      "--service-cluster-ip-range=10.0.0.0/24",
      "--etcd-compaction-interval=0",
      "--enable-priority-and-fairness=false",
      ...(options.noWatchCache ? ["--watch-cache=false"] : []),
      ...(options.apiserverArgs ?? []),
    ];
    const certConfig = await writeConfig(
      dir,
      "cert.yaml",
      kubeconfig(
        { server, "certificate-authority": "ca.crt" },
        { "client-certificate": "client.crt", "client-key": "client.key" },
        { name: "cert" },
      ),
    );
    const tokenConfig = await writeConfig(
      dir,
      "token.yaml",
      kubeconfig(
        { server, "certificate-authority": "ca.crt" },
        { tokenFile: "client-token" },
        { name: "token" },
      ),
    );
    admin = await loadKubeConfig({ path: certConfig, env: {} });
    const adminConn = admin;
    const startApiserver = async () => {
      procs.apiserver = new Proc("kube-apiserver", release.apiserver, args);
      const proc = procs.apiserver;
      await eventually(
        async () => {
          if (!proc.running) throw new Fatal(`kube-apiserver exited:\n${proc.tail.join("")}`);
          const res = await adminConn.client.request("/readyz");
          await res.body?.cancel();
          return true;
        },
        "kube-apiserver /readyz",
        60_000,
      ).catch((err) => {
        throw new Error(`${err.message}\n${proc.tail.join("").slice(-3000)}`);
      });
    };
    await startApiserver();

    const startProxy = async () => {
      procs.proxy = new Proc("kubectl proxy", release.kubectl, [
        "proxy",
        `--port=${proxyPort}`,
        "--address=127.0.0.1",
        `--kubeconfig=${certConfig}`,
      ]);
      const proc = procs.proxy;
      await eventually(
        async () => {
          if (!proc.running) throw new Fatal(`kubectl proxy exited:\n${proc.tail.join("")}`);
          const res = await fetch(`http://127.0.0.1:${proxyPort}/api`);
          await res.body?.cancel();
          return res.ok;
        },
        "kubectl proxy",
        20_000,
      );
    };
    let proxyConfig: string | undefined;
    if (options.proxy) {
      await startProxy();
      proxyConfig = await writeConfig(
        dir,
        "proxy.yaml",
        kubeconfig({ server: `http://127.0.0.1:${proxyPort}` }, {}, { name: "proxy" }),
      );
    }
    return {
      dir,
      pki,
      server,
      kubeconfigs: { token: tokenConfig, cert: certConfig, proxy: proxyConfig },
      clientTokenFile,
      admin,
      setServerToken: (token) =>
        writeFile(tokens, `${token},reflector,1001,"system:masters"\n${users}`),
      stopApiserver: () => procs.apiserver!.stop(),
      startApiserver,
      restartApiserver: async ({ downMs = 0 } = {}) => {
        await procs.apiserver!.stop();
        await new Promise((r) => setTimeout(r, downMs));
        await startApiserver();
      },
      apiserverLog: () => procs.apiserver?.tail.join("") ?? "",
      stopProxy: () => procs.proxy!.stop(),
      startProxy,
      compactEtcd: async () => {
        const range = await fetch(`${etcdUrl}/v3/kv/range`, {
          method: "POST",
          body: JSON.stringify({ key: btoa("a") }),
        });
        const revision = Number((await range.json()).header.revision);
        const res = await fetch(`${etcdUrl}/v3/kv/compaction`, {
          method: "POST",
          body: JSON.stringify({ revision: String(revision), physical: true }),
        });
        if (!res.ok) throw new Error(`etcd compaction failed: ${res.status} ${await res.text()}`);
        await res.body?.cancel();
        return revision;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
