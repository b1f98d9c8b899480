/**
 * managedFields bookkeeping (protocols B5): Update entries for ordinary writes, Apply entries for
 * server-side apply, ownership moved to the last writer, and 409 FieldManagerConflict when an
 * apply would change a field another manager owns (unless forced).
 */
import {
  clone,
  type FieldSet,
  fieldSetOf,
  leafPaths,
  mergePatch,
  owns,
  removePath,
  valueAt,
} from "./patch.ts";
import { groupVersion, isoSeconds, type Obj, type ResourceType } from "./store.ts";

type Entry = Record<string, unknown> & {
  manager: string;
  operation: string;
  fieldsV1?: FieldSet;
  subresource?: string;
};

export class SsaConflict extends Error {
  constructor(
    message: string,
    readonly causes: Array<{ type: string; message: string; field: string }>,
  ) {
    super(message);
  }
}

function entries(o: Obj | undefined): Entry[] {
  return clone((o?.metadata.managedFields ?? []) as Entry[]);
}

function take(list: Entry[], paths: string[][], except: (e: Entry) => boolean): Entry[] {
  for (const e of list) {
    if (except(e) || !e.fieldsV1) continue;
    for (const p of paths) removePath(e.fieldsV1, p);
  }
  return list.filter((e) => except(e) || Object.keys(e.fieldsV1 ?? {}).length > 0);
}

function upsert(list: Entry[], e: Entry, merge: boolean): Entry[] {
  const i = list.findIndex((x) =>
    x.manager === e.manager && x.operation === e.operation && x.subresource === e.subresource
  );
  if (i < 0) return [...list, e];
  const fieldsV1 = merge ? mergePatch(list[i]!.fieldsV1 ?? {}, e.fieldsV1) as FieldSet : e.fieldsV1;
  list[i] = { ...e, ...(fieldsV1 ? { fieldsV1 } : {}) };
  return list;
}

/** Records an Update entry for a PUT/PATCH/POST by `manager` writing the fields of `written`. */
export function recordUpdate(
  next: Obj,
  _cur: Obj | undefined,
  written: unknown,
  manager: string,
  t: ResourceType,
  nowMs: number,
  subresource?: string,
): void {
  const fields = fieldSetOf(written);
  delete fields["f:status"];
  if (subresource === "status") Object.assign(fields, { "f:status": {} });
  const paths = leafPaths(fields);
  if (paths.length === 0) return;
  let list = take(entries(next), paths, (e) => e.manager === manager && e.operation === "Update");
  list = upsert(list, {
    manager,
    operation: "Update",
    apiVersion: groupVersion(t),
    time: isoSeconds(nowMs),
    fieldsType: "FieldsV1",
    fieldsV1: fields,
    ...(subresource ? { subresource } : {}),
  }, true);
  next.metadata.managedFields = list;
}

/** Server-side apply of `applied` over `cur` by `manager`. */
export function applyManaged(
  cur: Obj | undefined,
  applied: Obj,
  manager: string,
  force: boolean,
  t: ResourceType,
  nowMs: number,
): Obj {
  const fields = fieldSetOf(applied);
  const paths = leafPaths(fields);
  const list = entries(cur);
  const causes: Array<{ type: string; message: string; field: string }> = [];
  for (const e of list) {
    if (e.manager === manager || !e.fieldsV1) continue;
    for (const p of paths) {
      const changes = JSON.stringify(valueAt(cur, p)) !== JSON.stringify(valueAt(applied, p));
      if (owns(e.fieldsV1, p) && changes) {
        causes.push({
          type: "FieldManagerConflict",
          message: `conflict with "${e.manager}"`,
          field: `.${p.join(".")}`,
        });
      }
    }
  }
  if (causes.length > 0 && !force) {
    throw new SsaConflict(
      `Apply failed with ${causes.length} conflict(s): ${
        causes.map((c) => `${c.message}: ${c.field}`).join("; ")
      }`,
      causes,
    );
  }
  const next = mergePatch(cur ?? {}, applied) as Obj;
  const base = take(list, paths, (e) => e.manager === manager && e.operation === "Apply");
  next.metadata.managedFields = upsert(base, {
    manager,
    operation: "Apply",
    apiVersion: groupVersion(t),
    time: isoSeconds(nowMs),
    fieldsType: "FieldsV1",
    fieldsV1: fields,
  }, false);
  if (cur) next.metadata.resourceVersion = cur.metadata.resourceVersion;
  return next;
}
