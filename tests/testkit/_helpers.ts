/**
 * Helpers for the test kit's tests: a server per test, fixture objects,
 * and line readers over response bodies.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../src/api/types.ts";
import { FakeApiServer, type FakeApiServerOptions } from "../../testkit.ts";
import { type Fixture, fixture } from "../_fixtures.ts";

/** Makes requests look like curl, which makes kube-apiserver pretty-print (as in the fixtures). */
export const CURL = { "User-Agent": "curl/7.88.1" };

/** Runs `fn` with a fresh server, closing it whatever happens. */
export async function withServer(
  options: FakeApiServerOptions,
  fn: (server: FakeApiServer) => void | Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** A ConfigMap. */
export function configMap(
  name: string,
  namespace = "fx",
  extra: Partial<KubeObject> = {},
): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, ...extra };
}

/** cm1, cm2, cm3 exactly as list-page1.http and list-page2.http show them (with kind and apiVersion). */
export function fixtureConfigMaps(): KubeObject[] {
  const items = [
    ...JSON.parse(fixture("list-page1.http").body).items,
    ...JSON.parse(fixture("list-page2.http").body).items,
  ];
  return items.map((item: KubeObject) => ({ kind: "ConfigMap", apiVersion: "v1", ...item }));
}

/** The whole body, split into lines (without the final empty one). */
export async function bodyLines(res: Response): Promise<string[]> {
  const text = await res.text();
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Reads a streamed body line by line; `cancel()` releases it. */
export class LineReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";
  #done = false;

  constructor(res: Response) {
    this.#reader = res.body!.getReader();
  }

  /** The next line, or undefined at the end of the body. */
  async next(): Promise<string | undefined> {
    while (true) {
      const newline = this.#buffer.indexOf("\n");
      if (newline >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        return line;
      }
      if (this.#done) return this.#buffer ? this.#take() : undefined;
      const { value, done } = await this.#reader.read();
      if (done) this.#done = true;
      else this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  /** The next line parsed as JSON. */
  async event(): Promise<{ type: string; object: KubeObject }> {
    const line = await this.next();
    assert.ok(line !== undefined, "the watch ended before the expected event");
    return JSON.parse(line);
  }

  /** Cancels the body. */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }

  #take(): string {
    const rest = this.#buffer;
    this.#buffer = "";
    return rest;
  }
}

/** Asserts the status and every header of a fixture (but Date and priority-and-fairness ones) match. */
export function assertFixtureHead(res: Response, name: string): Fixture {
  const recorded = fixture(name);
  assert.equal(res.status, recorded.status, `status of ${name}`);
  for (const [header, value] of recorded.headers) {
    if (header === "date" || header.startsWith("x-kubernetes-pf-")) continue;
    assert.equal(res.headers.get(header), value, `header ${header} of ${name}`);
  }
  return recorded;
}

/** Asserts status, headers and body bytes equal a fixture's. */
export async function assertFixture(res: Response, name: string): Promise<void> {
  const recorded = assertFixtureHead(res, name);
  assert.equal(await res.text(), recorded.body, `body of ${name}`);
}
