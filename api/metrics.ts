// The API's metrics: requests by route template and status (lib/http/metrics.ts, shared with the
// collector), the snapshot served (age = now − asOf; the swap duration is the store's own,
// served/snapshot-store.ts), DuckDB slots in use and waiting, and hits and misses of the
// per-snapshot response cache and of the replay memo. Label values are bounded: route templates
// (never raw paths), methods, status codes.
import client from 'prom-client';
import { registry } from '../lib/metrics.ts';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { SnapshotStore } from '../served/snapshot-store.ts';

// Counted as plain numbers (a lookup happens on every request; a labelled prom-client child
// validates and hashes its labels on each increment) and handed to the counter when scraped.
const lookups = { responses: { hit: 0, miss: 0 }, replays: { hit: 0, miss: 0 } };

new client.Counter({
  name: 'p2ptel_api_cache_lookups_total',
  help: 'Lookups of serialised responses in the per-snapshot cache (responses) and of repeated GETs in the replay memo (replays), by result (hit or miss)',
  labelNames: ['cache', 'result'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [cache, counts] of Object.entries(lookups)) {
      for (const [result, n] of Object.entries(counts)) this.labels(cache, result).inc(n);
    }
  },
});

/** One lookup of a GET in the replay memo (api/replayed-answers.ts). */
export function countReplayLookup(hit: boolean): void {
  if (hit) lookups.replays.hit++;
  else lookups.replays.miss++;
}

/** One per-snapshot response cache lookup. */
export function countResponseLookup(hit: boolean): void {
  if (hit) lookups.responses.hit++;
  else lookups.responses.miss++;
}

/** What the gauges read when scraped (the API of this process). */
let sources: { store: SnapshotStore; db: Db } | null = null;

new client.Gauge({
  name: 'p2ptel_snapshot_age_seconds',
  help: 'Now minus the asOf of the snapshot being served (absent while none is loaded)',
  registers: [registry],
  collect() {
    this.reset();
    const snap = sources?.store.current();
    if (snap) this.set((Date.now() - snap.asOfMs) / 1000);
  },
});

new client.Gauge({
  name: 'p2ptel_duckdb_slots',
  help: 'DuckDB calls of this process by pool (default, exports): running (in a slot) and waiting for one',
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    const stats = sources?.db.stats;
    if (!stats) return;
    for (const pool of ['default', 'exports'] as const) {
      this.set({ pool, state: 'active' }, stats[pool].running);
      this.set({ pool, state: 'waiting' }, stats[pool].queued);
    }
  },
});

/** Let the gauges read this API's snapshot store and DuckDB. */
export function bindApiMetrics(store: SnapshotStore, db: Db): void {
  sources = { store, db };
}

