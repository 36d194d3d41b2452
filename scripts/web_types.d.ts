// The web types the published declarations name (AbortSignal, URL, fetch...), for consumers
// whose TypeScript setup has none of them (`lib: ["ES2023"]`, `types: []`) or only some
// (`@types/node` has no `HeadersInit`). scripts/build_npm.mjs copies this file to
// npm/esm/src/_web_types.d.ts and adds `import type { ... } from ".../_web_types.js"` to every
// emitted declaration that names one of them, so the published types never depend on the DOM lib.
//
// Each type is the consumer's global one when it has one (the DOM lib, @types/node, Cloudflare's
// workers types...), so nothing changes for them; otherwise it is the few members a program uses.
// scripts/check_consumer_types.mjs type-checks the packed package in such setups.

type G = typeof globalThis;

/** The global `AbortSignal`, or its members this library's users need. */
export type AbortSignal = G extends { AbortSignal: { prototype: infer T } } ? T : AbortSignalShape;

/** The global `URL`, or its members. */
export type URL = G extends { URL: { prototype: infer T } } ? T : URLShape;

/** The global `URLSearchParams`, or its members. */
export type URLSearchParams = G extends { URLSearchParams: { prototype: infer T } } ? T
  : URLSearchParamsShape;

/** The global `ReadableStream` (its element type then comes from the consumer's lib), or its members. */
// deno-lint-ignore no-explicit-any
export type ReadableStream<R = any> = G extends { ReadableStream: { prototype: infer T } } ? T
  : ReadableStreamShape<R>;

/** The global `Response`, or its members. */
export type Response = G extends { Response: { prototype: infer T } } ? T : ResponseShape;

/** The global `Request`, or its members (what a handler of requests reads). */
export type Request = G extends { Request: { prototype: infer T } } ? T : RequestShape;

/** The global `Headers`, or its members. */
export type Headers = G extends { Headers: { prototype: infer T } } ? T : HeadersShape;

/** What the `Headers` constructor takes (the DOM lib's `HeadersInit`). */
export type HeadersInit = [string, string][] | Record<string, string> | Headers;

/** The global `fetch`, or a function of its shape. */
export declare const fetch: G extends { fetch: infer F } ? F : FetchShape;

interface AbortSignalShape {
  readonly aborted: boolean;
  // deno-lint-ignore no-explicit-any
  readonly reason: any;
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

interface URLShape {
  hash: string;
  host: string;
  hostname: string;
  href: string;
  readonly origin: string;
  password: string;
  pathname: string;
  port: string;
  protocol: string;
  search: string;
  readonly searchParams: URLSearchParams;
  username: string;
  toString(): string;
  toJSON(): string;
}

interface URLSearchParamsShape {
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callback: (value: string, key: string) => void): void;
  toString(): string;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

interface ReadableStreamShape<R> {
  readonly locked: boolean;
  // deno-lint-ignore no-explicit-any
  cancel(reason?: any): Promise<void>;
  getReader(): {
    read(): Promise<{ done: false; value: R } | { done: true; value?: undefined }>;
    releaseLock(): void;
    // deno-lint-ignore no-explicit-any
    cancel(reason?: any): Promise<void>;
    readonly closed: Promise<undefined>;
  };
}

interface HeadersShape {
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callback: (value: string, key: string) => void): void;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

interface ResponseShape {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  // deno-lint-ignore no-explicit-any
  json(): Promise<any>;
  text(): Promise<string>;
}

interface RequestShape {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly signal: AbortSignal;
  readonly body: ReadableStream<Uint8Array> | null;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  // deno-lint-ignore no-explicit-any
  json(): Promise<any>;
  text(): Promise<string>;
}

interface RequestInitShape {
  method?: string;
  headers?: HeadersInit;
  body?: string | Uint8Array | ArrayBuffer | null;
  signal?: AbortSignal | null;
  redirect?: "follow" | "error" | "manual";
}

type FetchShape = (
  input: string | URL | { readonly url: string },
  init?: RequestInitShape,
) => Promise<Response>;
