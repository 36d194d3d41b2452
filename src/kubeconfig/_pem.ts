/**
 * Checks that certificate and key material looks like what it claims to
 * be, so that a broken file fails at load time with an error naming the
 * field instead of as an opaque handshake failure later. Never quotes the
 * material.
 *
 * @module
 */
import { decodeBase64 } from "./_runtime.ts";
import { KubeConfigError } from "./kube_config_error.ts";

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** The PEM blocks of `text`: their label and decoded DER. */
function blocks(text: string): Array<{ label: string; der: Uint8Array | undefined }> {
  return [...text.matchAll(BLOCK)].map((m) => ({
    label: m[1],
    der: decodeBase64(m[2].replace(/^[A-Za-z-]+:.*$/gm, "")),
  }));
}

/** DER starts with an ASN.1 SEQUENCE whose length covers the whole block. */
function looksLikeDer(der: Uint8Array | undefined): boolean {
  if (!der || der.length < 4 || der[0] !== 0x30) return false;
  let len = der[1];
  let off = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n < 1 || n > 4 || der.length < 2 + n) return false;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[2 + i];
    off = 2 + n;
  }
  return off + len === der.length;
}

/**
 * Asserts that `pem` holds at least one certificate (and only well-formed
 * blocks); throws a {@linkcode KubeConfigError} naming `where` otherwise.
 */
export function checkCertificates(pem: string, where: { file?: string; field: string }): void {
  const found = blocks(pem);
  const certs = found.filter((b) => b.label === "CERTIFICATE");
  if (certs.length === 0) {
    throw new KubeConfigError(
      "does not hold a PEM certificate (-----BEGIN CERTIFICATE-----)",
      where,
    );
  }
  if (!certs.every((b) => looksLikeDer(b.der))) {
    throw new KubeConfigError("holds a PEM certificate that does not parse", where);
  }
}

/** Asserts that `pem` holds exactly one well-formed private key. */
export function checkPrivateKey(pem: string, where: { file?: string; field: string }): void {
  const keys = blocks(pem).filter((b) => /PRIVATE KEY$/.test(b.label));
  if (keys.length === 0) {
    throw new KubeConfigError(
      "does not hold a PEM private key (-----BEGIN ... PRIVATE KEY-----)",
      where,
    );
  }
  if (keys[0].label.includes("ENCRYPTED")) {
    throw new KubeConfigError("holds an encrypted private key, which is not supported", where);
  }
  if (!looksLikeDer(keys[0].der)) {
    throw new KubeConfigError("holds a PEM private key that does not parse", where);
  }
}
