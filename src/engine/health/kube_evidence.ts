import type { Clock } from "../../ports/clock.ts";
import type { Binding } from "../../domain/health/policy_schema.ts";
import { type ResourceNeed, resourcesFor } from "../../domain/health/resources.ts";
import type { EvidenceRead, KubeView, ResourceSnapshot } from "../../domain/health/types.ts";
import { type ListWatch, WatchCache, type WatchCacheStats } from "./watch_cache.ts";

/**
 * One watch cache per resource type the policy reads, created on first need. After the first
 * sync a round costs no LIST: readers read the caches. A cache whose watch broke re-lists on
 * the next `prepare`, and until then its snapshot is stale.
 */
export class KubeEvidence {
  readonly caches = new Map<string, WatchCache>();

  constructor(private readonly kube: ListWatch, private readonly clock: Clock) {}

  /**
   * Syncs every cache `b` needs (no request at all when they are live); a fresh read lists each
   * of them again, once per round, whatever its watch says.
   */
  async prepare(b: Binding, read?: EvidenceRead): Promise<void> {
    await Promise.all(
      resourcesFor(b).map((need) =>
        read?.fresh ? this.cache(need).refresh(read.round) : this.cache(need).sync()
      ),
    );
  }

  /**
   * The cache of `need`'s resource. It keeps objects cut to the need's shape until a need
   * without one (a reader that may read any field) arrives; from then on it keeps them whole.
   */
  cache(need: ResourceNeed): WatchCache {
    let c = this.caches.get(need.key);
    if (!c) {
      const { group, version, plural, namespaced } = need;
      c = new WatchCache(this.kube, { group, version, plural, namespaced }, this.clock, need.shape);
      this.caches.set(need.key, c);
    } else if (need.shape === undefined) {
      c.widen();
    }
    return c;
  }

  view(): KubeView {
    const snaps = new Map<string, ResourceSnapshot>();
    return {
      resource: (key) => {
        let s = snaps.get(key);
        if (!s) {
          s = this.caches.get(key)?.snapshot();
          if (s) snaps.set(key, s);
        }
        return s;
      },
    };
  }

  /** Summed request counters over all caches. */
  stats(): WatchCacheStats {
    const t = { lists: 0, watches: 0, events: 0, disconnects: 0 };
    for (const c of this.caches.values()) {
      t.lists += c.stats.lists;
      t.watches += c.stats.watches;
      t.events += c.stats.events;
      t.disconnects += c.stats.disconnects;
    }
    return t;
  }

  stop(): void {
    for (const c of this.caches.values()) c.stop();
  }
}
