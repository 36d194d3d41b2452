import { bodyText, InvalidUtf8Error } from "./_body_text.ts";
import type { KubeList, KubeObject, KubeObjectLike } from "../api/types.ts";
import { ListDecodeError, type ListDecodeProblem } from "../api/list_decode_error.ts";

/**
 * Options of {@linkcode decodeListStream}.
 */
export interface DecodeListStreamOptions {
  /** Cancels the body and rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
  /**
   * The longest item of `items` (or other top-level member, such as
   * `metadata`) accepted, in UTF-16 code units. A longer one is taken for
   * garbage, as in `WatchStreamOptions.maxEventLength`. Default: `33_554_432` (32 Mi).
   */
  maxItemLength?: number;
  /**
   * Called with each item as soon as it is parsed, whatever it is: an
   * object returned (not null, not an array) takes the item's place, any
   * other answer keeps the item (see `ListOptions.reuse`). A throw rejects
   * the call. Default: none.
   */
  reuse?: (item: unknown) => unknown;
}

// Where the scanner is in the top-level object.
const START = 0; // before `{`
const FIRST_KEY = 1; // after `{`: a key or `}`
const KEY = 2; // after `,`: a key
const KEY_STRING = 3; // inside a key
const COLON = 4; // after a key
const ITEMS_VALUE = 5; // after `"items":`: `[` or another value
const VALUE = 6; // inside a member value other than the items array
const ITEMS = 7; // inside the items array
const AFTER_VALUE = 8; // after the items array: `,` or `}`
const END = 9; // after `}`: only whitespace

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** JSON whitespace: space, tab, LF, CR. */
function skipWhitespace(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    i++;
  }
  return i;
}

function isWhitespace(text: string): boolean {
  return skipWhitespace(text, 0) === text.length;
}

/**
 * Finds the top-level members and the boundaries of each element of
 * `items` in JSON text fed chunk by chunk, parsing each complete run of
 * items with `JSON.parse` as soon as a chunk is scanned. Keeps only the
 * text of the unfinished item (or member) between chunks.
 */
class ListScanner {
  readonly result: Record<string, unknown> = {};
  #items: unknown[] = [];
  #mode = START;
  #max: number;
  /** Text of the unfinished capture from earlier chunks. */
  #parts: string[] = [];
  #partsLength = 0;
  /** Body offset of the current chunk's first character. */
  #offset = 0;
  #key = "";
  /** Nesting depth inside the current value (0: the member or item level). */
  #depth = 0;
  #inString = false;
  /** The previous chunk ended on a backslash inside a string. */
  #escaped = false;
  /** A comma was seen at the item level of the current items array. */
  #sawComma = false;
  /** Start of the current item (negative when it began in an earlier chunk). */
  #itemStart = 0;

  readonly #reuse: ((item: unknown) => unknown) | undefined;

  constructor(maxItemLength: number, reuse?: (item: unknown) => unknown) {
    this.#max = maxItemLength;
    this.#reuse = reuse;
  }

  #fail(problem: ListDecodeProblem, at: number): never {
    throw new ListDecodeError(problem, this.#offset + at, this.#items.length);
  }

  /** The capture's text: the parts kept from earlier chunks and `text[from, to)`. */
  #take(text: string, from: number, to: number): string {
    if (this.#parts.length === 0) return text.slice(from, to);
    this.#parts.push(text.slice(from, to));
    const whole = this.#parts.join("");
    this.#parts = [];
    this.#partsLength = 0;
    return whole;
  }

  /** Keeps `text[from..]` for a capture continuing in the next chunk. */
  #keep(text: string, from: number): void {
    if (from >= text.length) return;
    this.#parts.push(from === 0 ? text : text.slice(from));
    this.#partsLength += text.length - from;
    if (this.#partsLength > this.#max) this.#fail("too-long", text.length);
  }

  #parse(text: string, at: number): unknown {
    try {
      return JSON.parse(text);
    } catch {
      // JSON.parse's own message quotes the text: never pass it on.
      return this.#fail("syntax", at);
    }
  }

  #set(key: string, value: unknown): void {
    if (key === "__proto__") {
      Object.defineProperty(this.result, key, {
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } else this.result[key] = value;
  }

  /**
   * Skips string content from `i` (just after an opening quote or inside a
   * string carried over from the previous chunk). Returns the index after
   * the closing quote, or -1 if the string goes on in the next chunk.
   */
  #skipString(text: string, i: number): number {
    const n = text.length;
    if (this.#escaped) {
      if (i >= n) return -1;
      this.#escaped = false;
      i++;
    }
    while (true) {
      const q = text.indexOf('"', i);
      if (q === -1) {
        // An odd run of backslashes at the end escapes the next chunk's first character.
        let b = n - 1;
        while (b >= i && text.charCodeAt(b) === BACKSLASH) b--;
        this.#escaped = ((n - 1 - b) & 1) === 1;
        this.#inString = true;
        return -1;
      }
      let b = q - 1;
      while (b >= i && text.charCodeAt(b) === BACKSLASH) b--;
      if (((q - 1 - b) & 1) === 0) {
        this.#inString = false;
        return q + 1;
      }
      i = q + 1;
    }
  }

  /**
   * Scans a value from `i` for its end at depth 0: `,` or `}` for a member
   * value; `]` for the items array, whose item-level commas are recorded in
   * `commas` (the last one is what matters). Returns the end's index, or -1
   * at the end of the chunk.
   */
  #scan(text: string, i: number, items: boolean, commas: { last: number }): number {
    const n = text.length;
    if (this.#inString) {
      i = this.#skipString(text, i);
      if (i === -1) return -1;
    }
    let depth = this.#depth;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = this.#skipString(text, i + 1);
        if (i === -1) break;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0) {
          if (c === (items ? CLOSE_BRACKET : CLOSE_BRACE)) {
            this.#depth = 0;
            return i;
          }
          this.#fail("syntax", i);
        }
        depth--;
      } else if (c === COMMA && depth === 0) {
        if (!items) {
          this.#depth = 0;
          return i;
        }
        if (i - this.#itemStart > this.#max) this.#fail("too-long", i);
        this.#itemStart = i + 1;
        commas.last = i;
      }
      i++;
    }
    this.#depth = depth;
    return -1;
  }

  /** Parses `[` + text + `]` and appends its elements; `comma`: text ended at an item-level comma. */
  #pushItems(text: string, at: number, comma: boolean): void {
    if (!comma && isWhitespace(text)) {
      if (this.#sawComma) this.#fail("syntax", at); // `[1, ]`
      return; // `[ ]`
    }
    const parsed = this.#parse(`[${text}]`, at) as unknown[];
    if (parsed.length === 0) this.#fail("syntax", at); // `[ , 1]`
    if (this.#reuse) reuseItems(parsed, this.#reuse);
    if (this.#items.length === 0) {
      this.#items = parsed;
      this.#set("items", parsed);
    } else {
      const items = this.#items;
      for (let k = 0; k < parsed.length; k++) items.push(parsed[k]);
    }
    if (comma) this.#sawComma = true;
  }

  /** Consumes one chunk of text. */
  feed(text: string): void {
    const n = text.length;
    let i = 0;
    while (i < n) {
      switch (this.#mode) {
        case START:
        case FIRST_KEY:
        case KEY:
        case COLON:
        case ITEMS_VALUE:
        case AFTER_VALUE:
        case END: {
          i = skipWhitespace(text, i);
          if (i === n) break;
          i = this.#token(text, i);
          break;
        }
        case KEY_STRING: {
          const end = this.#skipString(text, i);
          if (end === -1) {
            this.#keep(text, i);
            i = n;
            break;
          }
          const key = this.#parse(this.#take(text, i, end), end);
          this.#key = key as string;
          this.#mode = COLON;
          i = end;
          break;
        }
        case VALUE: {
          const end = this.#scan(text, i, false, { last: -1 });
          if (end === -1) {
            this.#keep(text, i);
            i = n;
            break;
          }
          if (this.#partsLength + end - i > this.#max) this.#fail("too-long", end);
          const value = this.#parse(this.#take(text, i, end), end);
          if (this.#key === "items") {
            if (value !== null) this.#fail("shape", end);
            this.#items = [];
            this.#set("items", this.#items);
          } else this.#set(this.#key, value);
          this.#mode = text.charCodeAt(end) === COMMA ? KEY : END;
          i = end + 1;
          break;
        }
        case ITEMS: {
          const commas = { last: -1 };
          const end = this.#scan(text, i, true, commas);
          let from = i;
          if (commas.last !== -1) {
            this.#pushItems(this.#take(text, from, commas.last), commas.last, true);
            from = commas.last + 1;
          }
          if (end === -1) {
            if (n - this.#itemStart > this.#max) this.#fail("too-long", n);
            this.#keep(text, from);
            i = n;
            break;
          }
          if (end - this.#itemStart > this.#max) this.#fail("too-long", end);
          this.#pushItems(this.#take(text, from, end), end, false);
          this.#mode = AFTER_VALUE;
          i = end + 1;
          break;
        }
      }
    }
    this.#itemStart -= n; // relative to the next chunk
    this.#offset += n;
  }

  /** Handles the structural character at `text[i]` outside any value; returns the next index. */
  #token(text: string, i: number): number {
    const c = text.charCodeAt(i);
    switch (this.#mode) {
      case START:
        if (c !== OPEN_BRACE) this.#fail(c === OPEN_BRACKET ? "shape" : "syntax", i);
        this.#mode = FIRST_KEY;
        return i + 1;
      case FIRST_KEY:
      case KEY:
        if (c === QUOTE) {
          this.#mode = KEY_STRING;
          this.#inString = true;
          this.#parts.push('"'); // the key is parsed with its quotes
          this.#partsLength = 1;
          return i + 1;
        }
        if (c === CLOSE_BRACE && this.#mode === FIRST_KEY) {
          this.#mode = END;
          return i + 1;
        }
        return this.#fail("syntax", i);
      case COLON:
        if (c !== 58) this.#fail("syntax", i);
        this.#mode = this.#key === "items" ? ITEMS_VALUE : VALUE;
        this.#depth = 0;
        return i + 1;
      case ITEMS_VALUE:
        if (c === OPEN_BRACKET) {
          this.#mode = ITEMS;
          this.#items = [];
          this.#set("items", this.#items);
          this.#sawComma = false;
          this.#itemStart = i + 1;
          return i + 1;
        }
        this.#mode = VALUE; // `null`, or something refused once parsed
        return i;
      case AFTER_VALUE:
        if (c === COMMA) this.#mode = KEY;
        else if (c === CLOSE_BRACE) this.#mode = END;
        else this.#fail("syntax", i);
        return i + 1;
      default: // END
        return this.#fail("syntax", i);
    }
  }

  /** Throws the error for a body whose bytes stop being valid UTF-8 after the text fed so far. */
  invalidEncoding(): never {
    return this.#fail("encoding", 0);
  }

  /** The decoded list, once the body has ended. */
  end(): Record<string, unknown> {
    if (this.#mode !== END) this.#fail("truncated", 0);
    if (!("items" in this.result)) this.result.items = [];
    return this.result;
  }
}

/**
 * Decodes a Kubernetes list response body (`{"kind":…,"metadata":…,"items":[…]}`)
 * whatever the chunk boundaries. A body of up to 4 MiB (a page of a
 * paginated list) is parsed whole by one `JSON.parse`; a larger one
 * incrementally: each item is parsed as soon as the chunk that completes
 * it arrives, so a large unpaginated list never exists as one string next
 * to its parsed objects. Work is linear in the body size. `"items": null` or a missing `items` decode as `[]`; the
 * other top-level members are kept as `JSON.parse` would give them.
 * Items are kept as they are, whatever their type (`null`, numbers,
 * arrays...): judging them is the caller's job. Anything that is not a
 * JSON list object, a body that ends early or whose bytes are not valid
 * UTF-8 (`encoding`: never replaced with U+FFFD) throws a
 * {@linkcode ListDecodeError}; a byte order mark at the very start of the
 * body is skipped, every other U+FEFF is kept; a connection that fails mid-body
 * throws a {@linkcode KubeNetworkError}; an abort rejects with
 * `signal.reason`. The function owns the body: it reads it to its end or
 * cancels it.
 *
 * @example Decode a list body, whatever its chunks
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeListStream } from "../../mod.ts";
 *
 * const sent = {
 *   kind: "ConfigMapList",
 *   metadata: { resourceVersion: "7" },
 *   items: [{ metadata: { name: "é" } }],
 * };
 * const bytes = new TextEncoder().encode(JSON.stringify(sent));
 * const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
 * const body = new ReadableStream<Uint8Array>({
 *   start(controller) {
 *     controller.enqueue(bytes.subarray(0, cut));
 *     controller.enqueue(bytes.subarray(cut));
 *     controller.close();
 *   },
 * });
 * const list = await decodeListStream(body);
 * assert.equal(list.metadata.resourceVersion, "7");
 * assert.equal(list.items[0].metadata.name, "é");
 * ```
 */
export async function decodeListStream<T extends KubeObjectLike = KubeObject>(
  body: ReadableStream<Uint8Array>,
  options: DecodeListStreamOptions = {},
): Promise<KubeList<T>> {
  const { signal, maxItemLength = 33_554_432, reuse } = options;
  // A body that stays small (a page of a paginated list) is parsed whole by
  // one native JSON.parse, faster than scanning it; it cannot hold an item
  // over the limit. A larger one is scanned item by item as it arrives.
  const whole = Math.min(WHOLE_BODY_CHARS, maxItemLength);
  let buffered: string[] | undefined = [];
  let bufferedLength = 0;
  const scanner = new ListScanner(maxItemLength, reuse);
  const scanBuffered = () => {
    const texts = buffered!;
    buffered = undefined;
    for (const text of texts) scanner.feed(text);
  };
  try {
    for await (const text of bodyText(body, signal, "list body")) {
      if (buffered === undefined) scanner.feed(text);
      else if (bufferedLength === 0 && !opensObject(text)) {
        // not a JSON object: the scanner says so at once (an HTML page, garbage)
        buffered.push(text);
        scanBuffered();
      } else {
        buffered.push(text);
        bufferedLength += text.length;
        if (bufferedLength > whole) scanBuffered();
      }
    }
  } catch (err) {
    if (err instanceof InvalidUtf8Error) {
      if (buffered !== undefined) scanBuffered();
      scanner.invalidEncoding();
    }
    throw err;
  }
  if (buffered !== undefined) {
    const list = parsedList(buffered.join(""));
    if (list) {
      if (reuse) reuseItems(list.items as unknown[], reuse);
      return list as unknown as KubeList<T>;
    }
    scanBuffered(); // not a list: the scanner finds the same problem and says where
  }
  return scanner.end() as unknown as KubeList<T>;
}

/** Bodies up to this many characters are parsed whole (see decodeListStream). */
const WHOLE_BODY_CHARS = 4 * 1024 * 1024;

/** Whether `text`, the body's first piece, starts (after whitespace) as a JSON object may. */
function opensObject(text: string): boolean {
  const i = skipWhitespace(text, 0);
  return i === text.length || text.charCodeAt(i) === OPEN_BRACE;
}

/**
 * `text` parsed as a list (`items` null or missing made `[]`), or undefined
 * when it is not valid JSON or not a list object.
 */
function parsedList(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const list = value as Record<string, unknown>;
  if (list.items === undefined || list.items === null) list.items = [];
  else if (!Array.isArray(list.items)) return undefined;
  return list;
}

/**
 * Puts in place of each item what `reuse` returns for it, if that is an
 * object (not null, not an array); any other answer keeps the item.
 */
function reuseItems(items: unknown[], reuse: (item: unknown) => unknown): void {
  for (let i = 0; i < items.length; i++) {
    const held = reuse(items[i]);
    if (held !== null && typeof held === "object" && !Array.isArray(held)) items[i] = held;
  }
}
