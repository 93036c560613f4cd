// Serialised responses with their ETags, in one bounded cache for the whole process (not one per
// snapshot), so that a swap never holds two full caches: entries of a snapshot that is no longer
// served are dropped when the next one is swapped in, and a request still finishing on the old
// snapshot is answered without being cached. Concurrent first requests for one body share one
// build.
import { LRUCache } from 'lru-cache';
import { DeadBuffers } from '../lib/dead-buffers.ts';

/** A response body serialised once for a snapshot, with its ETag. */
export interface CachedBody {
  body: Buffer;
  etag: string;
}

/** The cache as one snapshot sees it: keys are that snapshot's. */
export interface SnapshotResponses {
  get(key: string): CachedBody | undefined;
  has(key: string): boolean;
  set(key: string, value: CachedBody): void;
  /** The cached body, or the one `build` makes (one build at a time per key). */
  getOrBuild(key: string, build: () => Promise<CachedBody>): Promise<CachedBody>;
}

const ENTRY_OVERHEAD = 160; // key, ETag string and LRU bookkeeping, roughly

export class ResponseCache {
  private readonly lru: LRUCache<string, CachedBody>;
  private readonly pending = new Map<string, Promise<CachedBody>>();
  private current: string | null = null;

  /**
   * memoryTargetBytes: resident memory above which V8 is asked for a full collection once the
   * cache has dropped as many bytes as it holds (lib/dead-buffers.ts; 0: never).
   */
  constructor(maxBytes: number, memoryTargetBytes = 0) {
    // Evicted bodies are old-generation garbage, collected by V8 only after 64 MB of external growth.
    const dead = new DeadBuffers(Math.max(4 * 2 ** 20, maxBytes), memoryTargetBytes);
    this.lru = new LRUCache<string, CachedBody>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (v, k) => v.body.length + k.length + ENTRY_OVERHEAD,
      dispose: (v) => dead.drop(v.body.length),
    });
  }

  /** The snapshot now served: every other snapshot's entries go. */
  serve(snapshotId: string): void {
    if (this.current === snapshotId) return;
    this.current = snapshotId;
    const prefix = `${snapshotId}\0`;
    for (const k of [...this.lru.keys()]) if (!k.startsWith(prefix)) this.lru.delete(k);
  }

  /** Bytes held (bodies and overhead). */
  get size(): number {
    return this.lru.calculatedSize;
  }

  forSnapshot(snapshotId: string): SnapshotResponses {
    const full = (key: string) => `${snapshotId}\0${key}`;
    const keep = (key: string, value: CachedBody) => {
      // A snapshot that is no longer served (a request that started before a swap) keeps nothing.
      if (this.current === null || this.current === snapshotId) this.lru.set(full(key), value);
    };
    return {
      get: (key) => this.lru.get(full(key)),
      has: (key) => this.lru.has(full(key)),
      set: keep,
      getOrBuild: (key, build) => {
        const hit = this.lru.get(full(key));
        if (hit) return Promise.resolve(hit);
        let p = this.pending.get(full(key));
        if (!p) {
          p = build().then((v) => {
            keep(key, v);
            return v;
          });
          this.pending.set(full(key), p);
          const done = () => this.pending.delete(full(key));
          p.then(done, done);
        }
        return p;
      },
    };
  }
}
