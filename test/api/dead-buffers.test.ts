// The response cache hands the bodies it drops back to the system sooner (lib/dead-buffers.ts): V8
// collects dead old-generation Buffers only once external memory grew by 64 MB, so a cache whose
// bodies churn would float that far above what it holds. Once it has dropped as many bytes as it
// holds, a full collection is asked for: observed here as a major GC (perf_hooks), and as the
// dropped bodies collected (a FinalizationRegistry's callbacks), within seconds and without any
// other allocation.
import { afterEach, describe, expect, it } from 'vitest';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { ResponseCache } from '../../served/response-cache.ts';

const MB = 2 ** 20;

function majorGcs(): { count: () => number; stop: () => void } {
  let n = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) n++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return { count: () => n, stop: () => obs.disconnect() };
}

const until = async (ok: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end && !ok(); ) await new Promise((r) => setTimeout(r, 20));
  return ok();
};

let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe('response cache: dropped bodies', () => {
  it('a cache that dropped as many bytes as it holds asks for a full collection, which frees them', async () => {
    // A target of one byte: the process is always above it.
    const cache = new ResponseCache(8 * MB, 1);
    const responses = cache.forSnapshot('s1');
    cache.serve('s1');
    // Fill the cache, then let the filler bodies become garbage of the old generation (they
    // survive young collections while cached).
    for (let i = 0; i < 7; i++) responses.set(`a${i}`, { body: Buffer.alloc(MB, i), etag: `"a${i}"` });
    const gcs = majorGcs();
    stop = gcs.stop;
    await new Promise((r) => setTimeout(r, 200));
    const before = gcs.count();
    // The filler bodies, watched: each one's callback runs once it has been collected.
    const collected = new Set<string>();
    const watch = new FinalizationRegistry<string>((key) => collected.add(key));
    for (let i = 0; i < 7; i++) watch.register(responses.get(`a${i}`)!.body, `a${i}`);
    // Below the threshold (4 MB evicted of an 8 MB cache): no collection is asked for.
    for (let i = 0; i < 4; i++) responses.set(`b${i}`, { body: Buffer.alloc(MB, i), etag: `"b${i}"` });
    // Past it (8 MB and more evicted): a major collection comes, and the dropped bodies go.
    for (let i = 0; i < 5; i++) responses.set(`c${i}`, { body: Buffer.alloc(MB, i), etag: `"c${i}"` });
    expect(await until(() => gcs.count() > before, 5000)).toBe(true);
    // a0..a6 were all evicted (7 + 9 MB set into 8 MB, least recently used first).
    expect(await until(() => collected.size === 7, 5000)).toBe(true);
    expect(cache.size).toBeLessThanOrEqual(8 * MB);
  });
});
