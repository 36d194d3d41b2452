/**
 * Throwaway test PKI, generated at test time with the `openssl` CLI into a
 * temporary folder (no private key is committed): a CA, a second unrelated
 * CA, server certificates and a client certificate.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Paths and PEM text of one generated certificate and key. */
export interface Pair {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

/** The generated material. */
export interface Pki {
  dir: string;
  ca: Pair;
  otherCa: Pair;
  /** Server certificate for 127.0.0.1, ::1 and localhost. */
  server: Pair;
  /** Server certificate valid only for the name `kube.test`. */
  namedServer: Pair;
  /** Client certificate, CN=alice, O=system:masters. */
  client: Pair;
  cleanup(): Promise<void>;
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { cwd }, (err, _out, stderr) => {
      if (err) reject(new Error(`openssl ${args[0]} failed: ${stderr}`));
      else resolve();
    });
  });
}

async function pair(dir: string, name: string): Promise<Pair> {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  return {
    certPath,
    keyPath,
    cert: await readFile(certPath, "utf8"),
    key: await readFile(keyPath, "utf8"),
  };
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

async function signed(
  dir: string,
  name: string,
  subject: string,
  ca: string,
  ext: string,
  days = 2,
): Promise<Pair> {
  await openssl(
    ["req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject],
    dir,
  );
  await writeFile(join(dir, `${name}.ext`), ext);
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      String(days),
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
  return pair(dir, name);
}

/** Generates a fresh PKI (about 100 ms); call `cleanup()` when done. */
export async function createPki(options: { serverNames?: string[] } = {}): Promise<Pki> {
  const { serverNames = ["IP:127.0.0.1", "IP:::1", "DNS:localhost"] } = options;
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-pki-"));
  const ca = async (name: string) => {
    await openssl([
      "req",
      "-x509",
      ...EC,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    ], dir);
    return pair(dir, name);
  };
  const caPair = await ca("ca");
  const otherCa = await ca("other-ca");
  const server = await signed(
    dir,
    "server",
    "/CN=kube-apiserver",
    "ca",
    `subjectAltName=${serverNames.join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  const namedServer = await signed(
    dir,
    "named-server",
    "/CN=kube.test",
    "ca",
    "subjectAltName=DNS:kube.test\nextendedKeyUsage=serverAuth\n",
  );
  const client = await signed(
    dir,
    "client",
    "/CN=alice/O=system:masters",
    "ca",
    "extendedKeyUsage=clientAuth\n",
  );
  return {
    dir,
    ca: caPair,
    otherCa,
    server,
    namedServer,
    client,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The base64 body lines of a PEM block (what a leak would contain). */
export function pemBody(pem: string): string[] {
  return pem.split("\n").filter((l) => l && !l.startsWith("-----"));
}

/**
 * A server certificate for 127.0.0.1 signed by the PKI's CA but expired
 * (its validity ended a day ago; openssl 3.0 has no `-not_after`, so
 * `-days -1`).
 */
export async function createExpiredServer(pki: Pki): Promise<Pair> {
  return await signed(
    pki.dir,
    "expired-server",
    "/CN=kube-apiserver",
    "ca",
    "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    -1,
  );
}

/** A self-signed (no CA) server certificate for 127.0.0.1, in the PKI's folder. */
export async function createSelfSignedServer(pki: Pki): Promise<Pair> {
  await openssl([
    "req",
    "-x509",
    ...EC,
    "-keyout",
    "self-signed.key",
    "-out",
    "self-signed.crt",
    "-days",
    "2",
    "-subj",
    "/CN=self-signed",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-addext",
    "basicConstraints=critical,CA:FALSE",
    "-addext",
    "extendedKeyUsage=serverAuth",
  ], pki.dir);
  return pair(pki.dir, "self-signed");
}
