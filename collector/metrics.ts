// The collector's own metrics (docs/operations.md), beside the request histogram it shares with the
// API (lib/http/metrics.ts): how long the spool's fdatasync takes (what every acknowledgement
// waits for: a disk's flush stalls show here first), how many reports were accepted and rejected,
// what waits in the spool, and the flusher's landings. Counted into plain numbers on the hot path
// and handed to prom-client when scraped, like the API's cache counters.
import client from 'prom-client';
import { registry } from '../lib/metrics.ts';

/** Upper bounds, in seconds, of the fdatasync histogram: from a quiet disk to a flush stall. */
export const FSYNC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

const fsyncSeconds = new client.Histogram({
  name: 'p2ptel_collector_spool_fsync_seconds',
  help: "Duration of the spool's write + fdatasync of one group commit (every request it carries is answered after it)",
  buckets: [...FSYNC_BUCKETS],
  registers: [registry],
});

const counts = { accepted: 0, rejected: 0, landedReports: 0 };

new client.Counter({
  name: 'p2ptel_collector_reports_total',
  help: 'Reports posted, by outcome: accepted (fsynced in the spool before the answer) or rejected (listed in the answer)',
  labelNames: ['outcome'] as const,
  registers: [registry],
  collect() {
    this.reset();
    this.labels('accepted').inc(counts.accepted);
    this.labels('rejected').inc(counts.rejected);
  },
});

new client.Counter({
  name: 'p2ptel_collector_landed_reports_total',
  help: 'Reports the flusher landed as Parquet in the landing area (at least once: a segment landed again after a crash counts again)',
  registers: [registry],
  collect() {
    this.reset();
    this.inc(counts.landedReports);
  },
});

const landingSeconds = new client.Histogram({
  name: 'p2ptel_collector_landing_seconds',
  help: 'Duration of landing one sealed spool segment as Parquet (the COPY, the fsyncs and the renames)',
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

/** What the gauges read of a spool. */
interface SpoolLevels {
  bytes(): number;
  sealed(): readonly unknown[];
  failed(): Error | null;
  oldestUnlandedAt(): number | null;
}

/** The spools of the collectors running in this process (one, but for tests). */
const spools = new Set<SpoolLevels>();

new client.Gauge({
  name: 'p2ptel_collector_spool_bytes',
  help: 'Bytes accepted and not landed yet: the open and sealed spool segments and writes waiting for the next fsync',
  registers: [registry],
  collect() {
    this.set([...spools].reduce((n, s) => n + s.bytes(), 0));
  },
});

new client.Gauge({
  name: 'p2ptel_collector_spool_sealed_segments',
  help: 'Sealed spool segments waiting for the flusher (more than one for long means the flush does not keep up)',
  registers: [registry],
  collect() {
    this.set([...spools].reduce((n, s) => n + s.sealed().length, 0));
  },
});

new client.Gauge({
  name: 'p2ptel_collector_oldest_unlanded_seconds',
  help: 'Age of the oldest acknowledged report not landed yet (0 when everything is landed): what the collector adds to the freshness of the figures',
  registers: [registry],
  collect() {
    const oldest = Math.min(...[...spools].map((s) => s.oldestUnlandedAt() ?? Infinity));
    this.set(Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
  },
});

new client.Gauge({
  name: 'p2ptel_collector_spool_failing',
  help: 'Spools that cannot write now (1 while a disk-full or out-of-descriptors error lasts: requests get 503, and the spool tries again every few seconds)',
  registers: [registry],
  collect() {
    this.set([...spools].filter((s) => s.failed() !== null).length);
  },
});

const spoolErrors = new client.Counter({
  name: 'p2ptel_collector_spool_write_errors_total',
  help: "Failed spool writes (a write, fsync or new segment), by error code; each makes the spool refuse reports until it writes again",
  labelNames: ['code'] as const,
  registers: [registry],
});

/** A spool write failed with `err`. */
export function countSpoolError(err: Error): void {
  spoolErrors.labels((err as NodeJS.ErrnoException).code ?? 'other').inc();
}

/** One group commit of the spool: its write + fdatasync took `seconds`. */
export function observeSpoolSync(seconds: number): void {
  fsyncSeconds.observe(seconds);
}

/** One request's outcome: reports accepted (durable) and rejected. */
export function countReports(accepted: number, rejected: number): void {
  counts.accepted += accepted;
  counts.rejected += rejected;
}

/** One segment landed. */
export function observeLanding(seconds: number, reports: number): void {
  landingSeconds.observe(seconds);
  counts.landedReports += reports;
}

/** Let the spool gauges read this spool while it is open. */
export function watchSpool(spool: SpoolLevels): () => void {
  spools.add(spool);
  return () => spools.delete(spool);
}
