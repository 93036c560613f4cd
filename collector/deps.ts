// What the collector's routes share: config, logger, the warehouse (for keys and tenants), the
// spool, the flusher, the per-key limiter and the batch workers.
import type { CollectorConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { Spool } from './spool.ts';
import type { Flusher } from './flusher.ts';
import type { TokenBuckets, WorkBudgets } from './limits.ts';
import type { BatchPool } from './batch-pool.ts';
import type { IngestKeyChecker } from '../control/ingest-keys.ts';

export interface CollectorDeps {
  config: CollectorConfig;
  log: Logger;
  layout: WarehouseLayout;
  spool: Spool;
  flusher: Flusher;
  /** What a presented ingest key may write (keys and tenants looked at every revocationPollMs). */
  keys: IngestKeyChecker;
  /** Reports per ingest key. */
  limiter: TokenBuckets;
  /** Bytes inflated and time spent checking, per ingest key. */
  budgets: WorkBudgets;
  /** Refused keys per client address. */
  keyFailures: TokenBuckets;
  /** Checks posted batches (worker threads, or in process). */
  batches: BatchPool;
  /** The clock reports' `ts` is checked against (a parameter so tests can pin it). */
  now: () => number;
}
