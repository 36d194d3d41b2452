// A throwaway PKI for the runtime matrix's client-certificate check (the
// `openssl` CLI, as tests/kubeconfig/_pki.ts does for the kubeconfig tests):
// a CA, a server certificate for 127.0.0.1 and a client certificate (CN
// alice), P-256 keys, valid two days. Returns PEM texts; the files are removed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** { ca: {cert, key}, server: {cert, key}, client: {cert, key} }; throws if openssl fails. */
export function createPki() {
  const dir = mkdtempSync(join(tmpdir(), "kube-reflector-matrix-pki-"));
  const openssl = (args) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const read = (name) => ({
    cert: readFileSync(join(dir, `${name}.crt`), "utf8"),
    key: readFileSync(join(dir, `${name}.key`), "utf8"),
  });
  const signed = (name, subject, ext) => {
    openssl(["req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject]);
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl([
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    ]);
    return read(name);
  };
  try {
    openssl([
      "req",
      "-x509",
      ...EC,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=matrix-ca",
    ]);
    return {
      ca: read("ca"),
      server: signed(
        "server",
        "/CN=kube-apiserver",
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
      ),
      client: signed("client", "/CN=alice", "extendedKeyUsage=clientAuth\n"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
