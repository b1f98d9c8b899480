import type {
  Kube,
  KubeObject,
  KubeResourceRef,
  KubeWatchEnd,
  KubeWatchEvent,
} from "../../ports/kube.ts";
import type { Clock } from "../../ports/clock.ts";
import { CairnError } from "../../domain/errors.ts";
import type { CacheFreshness, ResourceSnapshot } from "../../domain/health/types.ts";
import { projectObject, type Shape } from "../../domain/health/projection.ts";
import { NOT_WANTED } from "../abort_reason.ts";

/** The two Kube port calls a cache needs. */
export type ListWatch = Pick<Kube, "listObjects" | "watch">;

/** Request counters, for the benchmark and for tests that assert "no LIST per round". */
export interface WatchCacheStats {
  lists: number;
  watches: number;
  events: number;
  disconnects: number;
}

/**
 * All objects of one resource type, listed once and then kept current by a watch. When the
 * watch ends for any reason but our own abort, the cache is marked stale and its snapshot says
 * so; readers then report `unreadable` until `sync()` re-lists. A watch that the server closes
 * cleanly is resumed from the last resourceVersion and the cache becomes live again with the
 * first event that arrives on it.
 *
 * A cache given a shape keeps each object cut to it (`domain/health/projection.ts`), cut as each
 * list page and each event arrives; `widen()` turns it into a cache of whole objects.
 */
export class WatchCache {
  readonly stats: WatchCacheStats = { lists: 0, watches: 0, events: 0, disconnects: 0 };
  #objects = new Map<string, KubeObject>();
  #items: readonly KubeObject[] | undefined;
  #memo = new Map<string, unknown>();
  #state: CacheFreshness["state"] = "unsynced";
  #syncedAtMs: number | undefined;
  #confirmedAtMs: number | undefined;
  #staleSinceMs: number | undefined;
  #rv: string | undefined;
  #abort: AbortController | undefined;
  #syncing: Promise<void> | undefined;
  #lastEnd: KubeWatchEnd | undefined;
  #listGeneration = 0;
  #latestList: Promise<void> | undefined;
  #refreshed: { round: object; done: Promise<void> } | undefined;
  #shape: Shape | undefined;

  constructor(
    private readonly kube: ListWatch,
    readonly ref: KubeResourceRef,
    private readonly clock: Clock,
    shape?: Shape,
  ) {
    this.#shape = shape;
  }

  /** What the cache keeps of each object; undefined: whole objects. */
  get shape(): Shape | undefined {
    return this.#shape;
  }

  /**
   * Keeps whole objects from now on (a reader that may read any field needs this resource).
   * What the cache holds is cut, so it is no longer synced: the next `sync()` waits for a list
   * of whole objects, which starts now, and a list under way with the old shape yields to it.
   */
  widen(): void {
    if (this.#shape === undefined) return;
    this.#shape = undefined;
    if (this.#state === "unsynced" && !this.#syncing) return;
    this.#abort?.abort(NOT_WANTED);
    this.#abort = undefined;
    this.#state = "unsynced";
    this.#refreshed = undefined;
    this.#syncing = undefined;
    this.sync().catch(() => {}); // whoever syncs next is given this list and its failure
  }

  /** How the cache stands now; a live watch is confirmed as of now. */
  get freshness(): CacheFreshness {
    const now = this.clock.now();
    return {
      state: this.#state,
      ...(this.#syncedAtMs !== undefined ? { syncedAtMs: this.#syncedAtMs } : {}),
      ...(this.#state === "live"
        ? { confirmedAtMs: now }
        : this.#confirmedAtMs !== undefined
        ? { confirmedAtMs: this.#confirmedAtMs }
        : {}),
      ...(this.#staleSinceMs !== undefined ? { staleSinceMs: this.#staleSinceMs } : {}),
      ...(this.#rv !== undefined ? { resourceVersion: this.#rv } : {}),
    };
  }

  /** How the last watch ended (for evidence and tests). */
  get lastWatchEnd(): KubeWatchEnd | undefined {
    return this.#lastEnd;
  }

  /** The cached objects; the array and the memo map stay the same until the content changes. */
  snapshot(): ResourceSnapshot {
    this.#items ??= [...this.#objects.values()];
    return { items: this.#items, freshness: this.freshness, memo: this.#memo };
  }

  /** Lists and starts watching unless the cache is already live. Concurrent calls share one list. */
  sync(): Promise<void> {
    if (this.#state === "live") return Promise.resolve();
    if (!this.#syncing) {
      const syncing: Promise<void> = this.#relist().finally(() => {
        if (this.#syncing === syncing) this.#syncing = undefined;
      });
      this.#syncing = syncing;
    }
    return this.#syncing;
  }

  /**
   * Lists again whatever the watch says, once per `round` (the bindings of one round share the
   * list): a round that decides a terminal state judges what the server holds now, not what a
   * watch that may have skipped events delivered. A list older than a version this cache has
   * already seen is a stale read: refused (`HealthListStale`), the cache left stale, never judged.
   */
  refresh(round: object): Promise<void> {
    if (this.#refreshed?.round === round) return this.#refreshed.done;
    const done = this.#relist(true);
    this.#refreshed = { round, done };
    return done;
  }

  /** Stops the watch; the cache keeps its content but is no longer live. */
  stop(): void {
    this.#abort?.abort(NOT_WANTED);
    this.#abort = undefined;
    this.#markStale();
  }

  /** Lists again; a caller whose list a later one superseded waits for that later one. */
  #relist(fresh = false): Promise<void> {
    const listed = this.#list(fresh);
    this.#latestList = listed;
    return listed;
  }

  async #list(fresh: boolean): Promise<void> {
    this.#abort?.abort(NOT_WANTED);
    const generation = ++this.#listGeneration;
    this.stats.lists++;
    const shape = this.#shape;
    const project = shape ? (o: KubeObject) => projectObject(o, shape) : undefined;
    let list: Awaited<ReturnType<ListWatch["listObjects"]>>;
    try {
      list = await this.kube.listObjects(this.ref, project ? { project } : {});
    } catch (e) {
      // The watch is gone: until a list succeeds the cache is stale, not live.
      if (generation === this.#listGeneration) this.#markStale();
      throw e;
    }
    // A later list supersedes this one: its caller judges what that later list brings (never the
    // content from before both, which the cache may still hold while the later one is pending).
    if (generation !== this.#listGeneration) return await this.#latestList;
    if (fresh && olderVersion(list.resourceVersion, this.#rv)) {
      this.#markStale();
      throw new CairnError({
        reason: "HealthListStale",
        message: `${this.ref.plural}: list at resourceVersion ${list.resourceVersion} is older ` +
          `than ${this.#rv}, already seen`,
      });
    }
    // A port that does not cut pages leaves it to the cache (an object cut once is kept as is).
    this.#objects = new Map(list.items.map((o) => [key(o), project ? project(o) : o]));
    this.#changed();
    this.#rv = list.resourceVersion;
    const now = this.clock.now();
    this.#state = "live";
    this.#syncedAtMs = now;
    this.#confirmedAtMs = now;
    this.#staleSinceMs = undefined;
    this.#startWatch();
  }

  #startWatch(): void {
    const abort = new AbortController();
    this.#abort = abort;
    this.stats.watches++;
    const opts = { signal: abort.signal, ...(this.#rv ? { resourceVersion: this.#rv } : {}) };
    this.kube.watch(this.ref, opts, (ev) => this.#apply(ev, abort)).then(
      (end) => this.#ended(end, abort),
      (e) => this.#ended({ kind: "failed", reason: "KubeUnreachable", message: String(e) }, abort),
    );
  }

  #apply(ev: KubeWatchEvent, abort: AbortController): void {
    if (abort !== this.#abort) return;
    this.stats.events++;
    const rv = ev.object.metadata?.resourceVersion;
    if (rv) this.#rv = rv;
    this.#confirmedAtMs = this.clock.now();
    if (this.#state === "stale" && this.#resuming) {
      this.#state = "live";
      this.#staleSinceMs = undefined;
    }
    if (ev.type === "BOOKMARK") return;
    if (ev.type === "DELETED") this.#objects.delete(key(ev.object));
    else {
      const o = this.#shape ? projectObject(ev.object, this.#shape) : ev.object;
      this.#objects.set(key(o), o);
    }
    this.#changed();
  }

  #resuming = false;

  #ended(end: KubeWatchEnd, abort: AbortController): void {
    if (abort !== this.#abort) return;
    this.#lastEnd = end;
    if (end.kind === "aborted") return;
    this.stats.disconnects++;
    this.#markStale();
    // A clean close loses nothing: resume from the last version; it turns live on the next event.
    this.#resuming = end.kind === "closed";
    if (this.#resuming) this.#startWatch();
  }

  #markStale(): void {
    if (this.#state !== "live") return;
    this.#state = "stale";
    this.#staleSinceMs = this.clock.now();
  }

  #changed(): void {
    this.#items = undefined;
    this.#memo = new Map();
  }
}

/**
 * Whether resourceVersion `a` is older than `b`. Versions are opaque to Kubernetes clients, but
 * every etcd-backed server issues them from etcd's revision counter: when both are decimal
 * integers, a smaller one is an older state. Any other form is not compared (not older).
 */
export function olderVersion(a: string, b: string | undefined): boolean {
  if (b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

function key(o: KubeObject): string {
  const m = o.metadata ?? {};
  return `${m.namespace ?? ""}/${m.name ?? ""}`;
}
