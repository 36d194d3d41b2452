/**
 * Answers one request the way kube-apiserver does: its headers
 * (`Cache-Control: no-cache, private`, `Content-Type: application/json`,
 * `Retry-After` when a Status says so), `Content-Length` on whole bodies,
 * chunked streams for watches; and records the status in the request log.
 *
 * @module
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Status } from "../api/types.ts";
import { encodeJson } from "./_json.ts";
import type { StatusFault } from "./fault.ts";
import type { RecordedRequest } from "./types.ts";

const encoder = new TextEncoder();

/** The response side of one request. */
export class Reply {
  readonly res: ServerResponse;
  readonly record: RecordedRequest;
  /** Pretty-print JSON bodies (curl, `?pretty=true`). */
  readonly pretty: boolean;
  readonly #keepAlive: () => boolean;

  /** `keepAlive()` says, when the response starts and when it ends, whether its connection may serve another request. */
  constructor(
    res: ServerResponse,
    record: RecordedRequest,
    pretty: boolean,
    keepAlive: () => boolean,
  ) {
    this.res = res;
    this.record = record;
    this.pretty = pretty;
    this.#keepAlive = keepAlive;
    res.once("finish", () => {
      if (!this.#keepAlive()) res.socket?.destroy();
    });
  }

  /** True once the client went away or the response ended. */
  get finished(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** A whole JSON body with its status code. */
  json(code: number, value: unknown, headers: Record<string, string> = {}): void {
    this.bytes(code, "application/json", encoder.encode(encodeJson(value, this.pretty)), headers);
  }

  /** A failure `Status` (its `code` is the HTTP status); sets `Retry-After` from its details. */
  status(status: Status): void {
    const retry = status.details?.retryAfterSeconds;
    const headers: Record<string, string> = retry && retry > 0 ? { "Retry-After": `${retry}` } : {};
    this.json(status.code ?? 500, status, headers);
  }

  /** An injected status fault, with the body kind it asks for. */
  fault(fault: StatusFault, status: Status): void {
    const headers: Record<string, string> = {};
    const retry = fault.retryAfterSeconds ?? status.details?.retryAfterSeconds;
    if (retry !== undefined) headers["Retry-After"] = `${retry}`;
    if (fault.retryAfter !== undefined) headers["Retry-After"] = fault.retryAfter;
    switch (fault.body ?? "status") {
      case "status":
        return this.json(fault.code, status, headers);
      case "html":
        return this.bytes(fault.code, "text/html", encoder.encode(htmlPage(fault.code)), headers);
      case "text": {
        const text = `${status.message}\n`;
        return this.bytes(fault.code, "text/plain; charset=utf-8", encoder.encode(text), headers);
      }
      case "empty":
        return this.bytes(fault.code, "application/json", new Uint8Array(0), headers);
    }
  }

  /** A whole body with `Content-Length`. */
  bytes(
    code: number,
    contentType: string,
    body: Uint8Array,
    headers: Record<string, string> = {},
  ): void {
    if (this.finished) return;
    this.head(code, {
      "Content-Type": contentType,
      "Content-Length": `${body.length}`,
      ...headers,
    });
    this.res.end(body);
  }

  /** Sends the status line and headers now (streams: watches, chunked or stalled lists). */
  head(code: number, headers: Record<string, string> = {}): void {
    if (this.finished || this.res.headersSent) return;
    this.record.status = code;
    const all: Record<string, string> = {
      "Cache-Control": "no-cache, private",
      "Content-Type": "application/json",
      ...headers,
    };
    if (!this.#keepAlive()) all["Connection"] = "close";
    this.res.writeHead(code, all);
    this.res.flushHeaders();
  }

  /** Ends the body cleanly (for chunked bodies: the terminating chunk). */
  end(): void {
    if (!this.finished) this.res.end();
  }

  /** Drops the connection abruptly: a TCP reset where the runtime supports it. */
  reset(): void {
    const socket = this.res.socket as (Socket & { resetAndDestroy?: () => void }) | null;
    if (socket && typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
    else (socket ?? this.res).destroy();
  }
}

/** An error page as a reverse proxy (nginx) sends it. */
function htmlPage(code: number): string {
  const title = `${code} ${HTML_TITLES[code] ?? "Error"}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

const HTML_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Authorization Required",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Temporarily Unavailable",
  504: "Gateway Time-out",
};
