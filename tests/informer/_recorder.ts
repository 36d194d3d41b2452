/**
 * A handler that records what it is told, as short strings.
 *
 * @module
 */
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import type {
  DeletedObject,
  ResourceEventHandler,
} from "../../src/informer/resource_event_handler.ts";

const rv = (o: KubeObject) => o.metadata.resourceVersion ?? "?";
const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Records `add ns/a@101 initial`, `update ns/a@101->102`, `sync ns/a@101`, `delete ns/a@103`, `tombstone ns/a@101`. */
export class Recorder implements ResourceEventHandler<KubeObject> {
  events: string[] = [];
  deleted: DeletedObject<KubeObject>[] = [];

  onAdd(o: KubeObject, initial: boolean): void {
    this.events.push(`add ${key(o)}@${rv(o)}${initial ? " initial" : ""}`);
  }

  onUpdate(old: KubeObject, o: KubeObject): void {
    this.events.push(
      old === o ? `sync ${key(o)}@${rv(o)}` : `update ${key(o)}@${rv(old)}->${rv(o)}`,
    );
  }

  onDelete(o: DeletedObject<KubeObject>): void {
    this.deleted.push(o);
    if (o instanceof DeletedFinalStateUnknown) this.events.push(`tombstone ${o.key}@${rv(o.obj)}`);
    else this.events.push(`delete ${key(o)}@${rv(o)}`);
  }

  /** Events of one kind (the first word). */
  of(kind: string): string[] {
    return this.events.filter((e) => e.startsWith(kind + " "));
  }
}
