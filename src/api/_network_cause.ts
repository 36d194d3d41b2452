/**
 * Names the innermost cause of a network failure in a short, safe text:
 * the runtimes wrap it differently (undici: `TypeError: fetch failed` whose
 * `cause` has a `code`; Deno: `TypeError: fetch failed` whose `cause`'s
 * message quotes the whole URL; Bun: one error with a `code`).
 *
 * @module
 */

/** Node-style codes and what they mean (Bun's own names map to these too). */
const CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection closed while writing",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "temporary DNS failure",
  UND_ERR_CONNECT_TIMEOUT: "connect timeout",
  UND_ERR_SOCKET: "connection closed by the server",
  UND_ERR_HEADERS_TIMEOUT: "timed out waiting for response headers",
  UND_ERR_BODY_TIMEOUT: "timed out waiting for the response body",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed certificate",
  SELF_SIGNED_CERT_IN_CHAIN: "self-signed certificate in the chain",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "unable to verify the first certificate",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "certificate signed by an unknown authority",
  UNABLE_TO_GET_ISSUER_CERT: "certificate signed by an unknown authority",
  CERT_HAS_EXPIRED: "certificate has expired",
  CERT_NOT_YET_VALID: "certificate is not yet valid",
  CERT_REVOKED: "certificate revoked",
  ERR_TLS_CERT_ALTNAME_INVALID: "certificate does not match the server name",
  ERR_SSL_WRONG_VERSION_NUMBER: "TLS handshake failed (is the server plain HTTP?)",
};

/** Bun's names for some of them. */
const ALIASES: Record<string, string> = {
  ConnectionRefused: "ECONNREFUSED",
  ConnectionReset: "ECONNRESET",
  ConnectionClosed: "ECONNRESET",
  Timeout: "ETIMEDOUT",
};

/** Deno gives no codes: what its (rustls, hyper, getaddrinfo) messages say, in order of precedence. */
const DENO_PATTERNS: Array<[RegExp, string]> = [
  [/connection refused/i, "ECONNREFUSED"],
  [/connection reset/i, "ECONNRESET"],
  [/temporary failure in name resolution/i, "EAI_AGAIN"],
  [
    /dns error|failed to lookup address|name or service not known|nodename nor servname/i,
    "ENOTFOUND",
  ],
  [/invalid peer certificate: Expired/i, "CERT_HAS_EXPIRED"],
  [/invalid peer certificate: NotValidYet/i, "CERT_NOT_YET_VALID"],
  [/invalid peer certificate: UnknownIssuer/i, "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"],
  [/invalid peer certificate: (NotValidForName|.*not valid for)/i, "ERR_TLS_CERT_ALTNAME_INVALID"],
  [/host is unreachable|no route to host/i, "EHOSTUNREACH"],
  [/network is unreachable/i, "ENETUNREACH"],
  [/timed out/i, "ETIMEDOUT"],
];

const MAX_TEXT = 200;

/**
 * Strips what must never reach a message: a URL's userinfo, query and
 * fragment, bearer or basic credentials, header values of
 * `authorization`-like headers, `token=`/`password=` pairs, control
 * characters; caps the length.
 */
export function sanitize(text: string): string {
  let out = text
    // Deno quotes the whole request URL: the request is named elsewhere.
    .replace(/error sending request for url \([^)]*\):?\s*/gi, "")
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1")
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s?#)'"<>]*)[?#][^\s)'"<>]*/gi, "$1")
    .replace(
      /\b(proxy-authorization|authorization|cookie|set-cookie|x-api-key)(["']?\s*[:=]\s*)("[^"]*"|'[^']*'|(?:(?:bearer|basic|negotiate)\s+)?[^\s,;]+)/gi,
      "$1$2[redacted]",
    )
    .replace(/\b(bearer|basic)(\s+)(?!\[redacted\])[^\s,;]+/gi, "$1$2[redacted]")
    .replace(
      /\b(access_token|token|password|passwd|secret|api[_-]?key)(["']?\s*[=:]\s*)(?!\[redacted\])[^\s,;&]+/gi,
      "$1$2[redacted]",
    )
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (out.length > MAX_TEXT) out = `${out.slice(0, MAX_TEXT - 1)}…`;
  return out;
}

function messageOf(err: unknown): string {
  if (typeof err === "string") return err;
  if (err !== null && typeof err === "object") {
    const m = (err as { message?: unknown }).message;
    if (typeof m === "string") return m;
  }
  return "";
}

function codeOf(err: unknown): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string" || !/^[A-Za-z][A-Za-z0-9_]{1,63}$/.test(code)) return undefined;
  return ALIASES[code] ?? code;
}

/** The chain `err`, `err.cause`, ... (and an AggregateError's first error), at most 8 deep. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let e: unknown = err;
  while (e !== undefined && e !== null && out.length < 8 && !out.includes(e)) {
    out.push(e);
    if (typeof e !== "object") break;
    const next: unknown = (e as { cause?: unknown }).cause;
    if (next !== undefined && next !== null) e = next;
    else {
      const errors: unknown = (e as { errors?: unknown }).errors;
      e = Array.isArray(errors) ? errors[0] : undefined;
    }
  }
  return out;
}

/** A host name or address as it may appear in a message: nothing else gets through. */
const HOST = /^[A-Za-z0-9*_.:[\]-]{1,253}$/;
/** The most certificate names a message lists. */
const MAX_NAMES = 8;

function hostText(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const host = value.replace(/\.$/, ""); // Node writes "Host: kube.test." with the root dot
  return HOST.test(host) ? host : undefined;
}

/** Deno's message quotes the request URL: its host name (never userinfo, path or query). */
function hostOfDenoUrl(message: string): string | undefined {
  const url = /error sending request for url \(([^\s)]+)\)/i.exec(message)?.[1];
  if (!url) return undefined;
  try {
    return hostText(new URL(url).hostname.replace(/^\[(.*)\]$/, "$1"));
  } catch {
    return undefined;
  }
}

/** The host whose name did not resolve: Node's and Bun's `hostname`, or Deno's URL. */
function unresolvedHost(errors: unknown[]): string | undefined {
  for (const e of errors) {
    const host = e !== null && typeof e === "object"
      ? hostText((e as { hostname?: unknown }).hostname)
      : undefined;
    if (host) return host;
  }
  for (const e of errors) {
    const host = hostOfDenoUrl(messageOf(e));
    if (host) return host;
  }
  return undefined;
}

/**
 * The names a certificate is valid for and the name it was checked
 * against: Node's `ERR_TLS_CERT_ALTNAME_INVALID` error carries `host` and
 * `cert.subjectaltname` (`"DNS:a, IP Address:10.0.0.1"`); Deno's (rustls)
 * message says `certificate not valid for name "c"; certificate is only
 * valid for DnsName("a"), DnsName("b") or IpAddress(10.0.0.1)`.
 */
function nameMismatch(errors: unknown[]): { names: string[]; host?: string } | undefined {
  for (const e of errors) {
    if (e === null || typeof e !== "object") continue;
    const { code, host, cert } = e as { code?: unknown; host?: unknown; cert?: unknown };
    const alt = (cert as { subjectaltname?: unknown } | undefined)?.subjectaltname;
    if (code !== "ERR_TLS_CERT_ALTNAME_INVALID" || typeof alt !== "string") continue;
    const names = alt.split(/,\s*/).map((n) => n.replace(/^(DNS|IP Address):/, ""));
    return { names, host: hostText(host) };
  }
  for (const e of errors) {
    const m =
      /certificate not valid for name "([^"]*)"; certificate (?:is only valid for ([^\n]*)|is not valid for any names)/
        .exec(messageOf(e));
    if (!m) continue;
    const names = [...(m[2] ?? "").matchAll(/(?:DnsName\("([^"]*)"\)|IpAddress\(([^)]*)\))/g)]
      .map((n) => n[1] ?? n[2]);
    return { names, host: hostText(m[1]) };
  }
  return undefined;
}

/**
 * kubectl's (Go's) words for a certificate issued for other names:
 * `certificate is valid for a, b, not c`. Only names that look like host
 * names or addresses are shown, at most {@linkcode MAX_NAMES}.
 */
function mismatchText({ names, host }: { names: string[]; host?: string }): string | undefined {
  const shown = names.map(hostText).filter((n): n is string => n !== undefined);
  const listed = shown.slice(0, MAX_NAMES).join(", ") +
    (shown.length > MAX_NAMES ? `, and ${shown.length - MAX_NAMES} more` : "");
  if (!listed) {
    return host ? `certificate is not valid for any names, but wanted to match ${host}` : undefined;
  }
  return `certificate is valid for ${listed}, not ${host ?? "the server's name"}`;
}

/**
 * What went wrong, from the innermost cause: a normalized code (Node's
 * names, also derived from Deno's messages) when one is known, and a short
 * sanitized text (`"ECONNREFUSED (connection refused)"`). A name that did
 * not resolve is named (`"ENOTFOUND kube.example (host not found)"`), and a
 * certificate issued for other names lists them, as kubectl does
 * (`"ERR_TLS_CERT_ALTNAME_INVALID (certificate is valid for a, b, not c)"`).
 */
export function describeNetworkCause(err: unknown): { code: string | undefined; text: string } {
  const errors = chain(err);
  let code: string | undefined;
  let message = "";
  for (const e of errors) {
    code = codeOf(e) ?? code;
    const m = messageOf(e);
    if (m) message = m;
  }
  if (code === undefined) {
    for (const e of [...errors].reverse()) {
      const m = messageOf(e);
      const hit = DENO_PATTERNS.find(([re]) => re.test(m));
      if (hit) {
        code = hit[1];
        break;
      }
    }
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    const host = unresolvedHost(errors);
    if (host) return { code, text: `${code} ${host} (${CODES[code]})` };
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    const mismatch = nameMismatch(errors);
    const text = mismatch && mismatchText(mismatch);
    if (text) return { code, text: `${code} (${text})` };
  }
  const known = code !== undefined ? CODES[code] : undefined;
  if (code !== undefined && known) return { code, text: `${code} (${known})` };
  const detail = sanitize(message);
  if (code !== undefined) {
    return {
      code,
      text: detail && !detail.includes(code) ? `${code} (${detail})` : detail || code,
    };
  }
  return { code, text: detail || (err instanceof Error ? err.name : "unknown error") };
}
