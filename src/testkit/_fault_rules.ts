/**
 * The injected fault rules, matched in order; each match uses up one of
 * the rule's `times`.
 *
 * @module
 */
import type { Fault, FaultRule, InjectedFault } from "./fault.ts";
import type { RequestVerb } from "./types.ts";

interface ActiveRule {
  rule: FaultRule;
  fired: number;
  remaining: number;
}

/** An ordered list of fault rules. */
export class FaultRules {
  #rules: ActiveRule[] = [];

  /** Adds a rule after the others; validates it. */
  add(rule: FaultRule): InjectedFault {
    validate(rule);
    const active: ActiveRule = { rule: { ...rule }, fired: 0, remaining: rule.times ?? 1 };
    this.#rules.push(active);
    const remove = () => this.#remove(active);
    return {
      rule: active.rule,
      get fired() {
        return active.fired;
      },
      get remaining() {
        return active.remaining;
      },
      cancel: remove,
    };
  }

  /**
   * The fault for this request, if a rule matches; uses up one of its
   * times. `resourceVersion`: the request's query parameter (`""` if absent).
   */
  take(
    verb: RequestVerb,
    resource?: string,
    namespace?: string,
    resourceVersion = "",
  ): Fault | undefined {
    for (const active of this.#rules) {
      const { rule } = active;
      const verbOk = (rule.verb ?? "any") === "any" || rule.verb === verb;
      const resourceOk = rule.resource === undefined || rule.resource === resource;
      const namespaceOk = rule.namespace === undefined || rule.namespace === namespace;
      const rvOk = rule.resourceVersion === undefined || rule.resourceVersion === resourceVersion;
      if (!verbOk || !resourceOk || !namespaceOk || !rvOk) continue;
      active.fired++;
      active.remaining--;
      if (active.remaining <= 0) this.#remove(active);
      return rule.fault;
    }
    return undefined;
  }

  /** True while a rule would reset a connection at request time (see `FakeApiServer.inject`). */
  get armsRequestTimeReset(): boolean {
    return this.#rules.some(({ rule }) =>
      rule.fault.kind === "reset" && rule.fault.afterEvents === undefined
    );
  }

  /** Removes every rule. */
  clear(): void {
    for (const active of this.#rules) active.remaining = 0;
    this.#rules = [];
  }

  #remove(active: ActiveRule): void {
    active.remaining = 0;
    this.#rules = this.#rules.filter((r) => r !== active);
  }
}

const KINDS = new Set(["status", "close", "stall", "error-event", "raw", "chunked", "reset"]);
const VERBS = new Set(["list", "watch", "get", "create", "update", "patch", "delete", "any"]);

function validate(rule: FaultRule): void {
  const { fault, times = 1, verb = "any" } = rule;
  if (!fault || !KINDS.has(fault.kind)) {
    throw new TypeError(`inject: unknown fault kind ${JSON.stringify(fault?.kind)}`);
  }
  if (!VERBS.has(verb)) throw new TypeError(`inject: unknown verb ${JSON.stringify(verb)}`);
  if (rule.resourceVersion !== undefined && typeof rule.resourceVersion !== "string") {
    throw new TypeError(`inject: resourceVersion must be a string, got ${rule.resourceVersion}`);
  }
  if ("retryAfter" in fault && fault.retryAfter !== undefined) {
    if (typeof fault.retryAfter !== "string" || /[\r\n]/.test(fault.retryAfter)) {
      throw new TypeError("inject: retryAfter must be a string without line breaks");
    }
  }
  if (!(times >= 1) || (times !== Infinity && !Number.isInteger(times))) {
    throw new RangeError(`inject: times must be a positive integer or Infinity, got ${times}`);
  }
  if ("afterEvents" in fault && fault.afterEvents !== undefined) {
    if (!Number.isInteger(fault.afterEvents) || fault.afterEvents < 0) {
      throw new RangeError(`inject: afterEvents must be an integer >= 0, got ${fault.afterEvents}`);
    }
  }
  if ((fault.kind === "status" || fault.kind === "error-event") && !(fault.code >= 100)) {
    throw new RangeError(`inject: ${fault.kind} needs an HTTP code, got ${fault.code}`);
  }
  if (fault.kind === "chunked" && fault.chunkSize !== "random") {
    if (!Number.isInteger(fault.chunkSize) || fault.chunkSize < 1) {
      throw new RangeError(`inject: chunkSize must be an integer >= 1, got ${fault.chunkSize}`);
    }
  }
}
