// Memory that a long-running server dropped, handed back sooner. A Buffer's bytes live outside
// V8's heap, and V8 collects the old generation's dead Buffers only once external memory has grown
// by 64 MB since its last full collection (its soft limit for external memory), so a server whose
// caches churn large bodies floats up to 64 MB above what it holds. A cache that drops a body
// counts its bytes here; past `thresholdBytes` since the last collection, and while the process's
// resident memory is above `rssTargetBytes`, V8 is asked for a full collection. It runs as a task
// of its own, soon after, and is a pause of its own (17–36 ms on the benchmark's API, against
// 3–10 ms for the finalisation of V8's own incremental collections), so it is asked for only where
// memory is short. Measured in docs/api.md ("Serving at scale").
import v8 from 'node:v8';
import vm from 'node:vm';

type Gc = (options: { type: 'major'; execution: 'async' }) => Promise<void>;

let gc: Gc | null | undefined;

/** V8's `gc`, made reachable without a launch flag (the flag only exposes the function). */
function collector(): Gc | null {
  if (gc !== undefined) return gc;
  try {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as Gc;
  } catch {
    gc = null;
  }
  return gc;
}

export class DeadBuffers {
  private dropped = 0;
  private collecting = false;

  /** rssTargetBytes 0: never ask. */
  constructor(
    private readonly thresholdBytes: number,
    private readonly rssTargetBytes: number,
  ) {}

  /** `bytes` of Buffers were let go (a cache evicted or replaced them). */
  drop(bytes: number): void {
    this.dropped += bytes;
    if (this.dropped < this.thresholdBytes || this.collecting || this.rssTargetBytes === 0) return;
    if (process.memoryUsage.rss() < this.rssTargetBytes) return;
    const collect = collector();
    if (!collect) return;
    this.dropped = 0;
    this.collecting = true;
    void collect({ type: 'major', execution: 'async' })
      .catch(() => {})
      .finally(() => {
        this.collecting = false;
      });
  }
}
