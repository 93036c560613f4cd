// The published snapshot as the API serves it: what stays small whatever the history (stream
// summaries, platform and per-customer rows: a few rows per stream) is loaded when CURRENT moves
// and swapped in one assignment, so a request that started on the old snapshot finishes on it
// and no request ever sees a mix. Series, which grow with streams × history, stay in the
// snapshot's Parquet and are read on demand (api/timeseries.ts). A newer snapshot that cannot be
// read is logged and skipped.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../warehouse/duckdb/index.ts';
import { fileList } from '../warehouse/duckdb/index.ts';
import type { BucketRow } from '../warehouse/figures/index.ts';
import { readSnapshotManifest, type SnapshotManifest } from '../warehouse/snapshots/index.ts';
import { readStreamSummaries, SUMMARY_FIGURES, type StreamSummary } from '../warehouse/snapshots/index.ts';
import { publishedDir, readCurrent, sessionClassFiles, snapshotFiles, SnapshotUnreadableError } from '../warehouse/snapshots/index.ts';
import { ApiError } from '../lib/http/problem.ts';
import { problems } from './problems.ts';
import { WINDOW_NAMES, type WindowName } from '../warehouse/figures/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { Logger } from '../lib/log.ts';
import client from 'prom-client';
import { registry } from '../lib/metrics.ts';
import { LRUCache } from 'lru-cache';
import { listSeriesFiles, type SeriesFile } from '../warehouse/reads/index.ts';
import { ResponseCache, type CachedBody, type SnapshotResponses } from './response-cache.ts';
import type { BreakdownFigures } from '../warehouse/reads/index.ts';

/** Time from CURRENT moving to the new snapshot swapped in (api/metrics.ts reads the rest). */
const snapshotSwapSeconds = new client.Histogram({
  name: 'p2ptel_snapshot_swap_duration_seconds',
  help: 'Time to load a newly published snapshot before swapping it in',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export type { BucketRow, CachedBody };

/** A stream summary as the API serves it: lastSeenAt as an ISO 8601 string. */
export type SummaryJson = Omit<StreamSummary, 'windowName' | 'lastSeenAt'> & { lastSeenAt: string | null };

export interface PlatformJson extends Omit<SummaryJson, 'streamId'> {
  streams: number;
}

/** The quality figures of a stream in a window (stream_quality.sql), unfiltered. */
export type QualityJson = Pick<BreakdownFigures, 'rebufferEvents' | 'rebufferRatio' | 'startupTimeP95Ms' | 'p2pConnectionSuccess'>;

/** Customers whose series file lists a snapshot keeps. */
export const SERIES_FILE_LISTS = 256;

export class ServedSnapshot {
  readonly asOfMs: number;
  /** HTTP date of asOf, for Last-Modified. */
  readonly lastModified: string;

  constructor(
    readonly id: string,
    readonly dir: string,
    readonly manifest: SnapshotManifest,
    readonly summaries: ReadonlyMap<WindowName, ReadonlyMap<string, SummaryJson>>,
    readonly platform: ReadonlyMap<WindowName, PlatformJson>,
    /** Per-customer rows, by window then customer (windows where the customer reported). */
    readonly customerRows: ReadonlyMap<WindowName, ReadonlyMap<string, PlatformJson>>,
    /** Serialised responses of this snapshot, built on first request (a view of the process's bounded cache). */
    readonly responses: SnapshotResponses,
    /**
     * Each stream's quality figures by window, then stream (streams with a report in the window);
     * null for a snapshot published before breakdowns existed (no session classes either).
     */
    readonly quality: ReadonlyMap<WindowName, ReadonlyMap<string, QualityJson>> | null = null,
    /** The warehouse's landing folder (layout.rawReports), where short windows read recent reports. */
    private readonly rawReports: string | null = null,
  ) {
    this.asOfMs = Date.parse(manifest.asOf);
    this.lastModified = new Date(this.asOfMs).toUTCString();
  }

  /** Whether the snapshot has session classes and quality rows (published since breakdowns exist). */
  get hasBreakdowns(): boolean {
    return this.quality !== null;
  }

  /** Whether a stream has any report up to asOf. */
  knows(streamId: string): boolean {
    return this.summaries.get('all')?.has(streamId) ?? false;
  }

  /** The customer's streams with any report up to asOf. */
  streamsOf(customerId: string): string[] {
    const prefix = `${customerId}:`;
    return [...(this.summaries.get('all')?.keys() ?? [])].filter((id) => id.startsWith(prefix));
  }

  /** Whether the snapshot has a partition (and so series files) for the customer. */
  hasCustomer(customerId: string): boolean {
    return this.manifest.partitions.some((p) => p.customerId === customerId);
  }

  /**
   * The customer's series files by day (listed once per customer, for the customers read most
   * recently: a listing is a few hundred bytes a day of history).
   */
  seriesFiles(customerId: string): Promise<SeriesFile[]> {
    return once(this.seriesFileLists, customerId, () => listSeriesFiles(this.dir, customerId));
  }

  private readonly seriesFileLists = new LRUCache<string, Promise<SeriesFile[]>>({ max: SERIES_FILE_LISTS });

  /**
   * Where each of the customer's streams starts (its first minute, by stream id), read by `load`
   * once per customer for this snapshot (a number per stream, for the customers read most recently).
   */
  firstMinutes(customerId: string, load: () => Promise<ReadonlyMap<string, number>>): Promise<ReadonlyMap<string, number>> {
    return once(this.firstMinuteMaps, customerId, load);
  }

  private readonly firstMinuteMaps = new LRUCache<string, Promise<ReadonlyMap<string, number>>>({ max: SERIES_FILE_LISTS });

  /**
   * The customer's session class files (every part: snapshotFiles), listed once per customer for
   * this snapshot (for the customers read most recently); none for a customer without a partition.
   */
  sessionClassFiles(customerId: string): readonly string[] {
    let files = this.classFileLists.get(customerId);
    if (!files) {
      files = this.hasCustomer(customerId) ? sessionClassFiles(snapshotFiles(this.dir), [customerId]) : [];
      this.classFileLists.set(customerId, files);
    }
    return files;
  }

  private readonly classFileLists = new LRUCache<string, readonly string[]>({ max: SERIES_FILE_LISTS });

  /** customerInputs of the warehouse the snapshot was loaded from (null without a partition). */
  recentInputs(customerId: string): { files: string[]; presentColumns: string[] } | null {
    if (this.rawReports === null) return null;
    return this.customerInputs({ rawReports: this.rawReports }, customerId);
  }

  /** The landed files (absolute) and present columns of one customer's partition in this snapshot. */
  customerInputs(layout: Pick<WarehouseLayout, 'rawReports'>, customerId: string): { files: string[]; presentColumns: string[] } | null {
    const p = this.manifest.partitions.find((x) => x.customerId === customerId);
    if (!p) return null;
    return { files: p.files.map((f) => path.join(layout.rawReports, f.path)), presentColumns: p.presentColumns };
  }
}

/** `make()`'s promise for `key`, made once while `cache` keeps it; a failed one is forgotten, so the next call tries again. */
function once<T>(cache: LRUCache<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    const made = make();
    cache.set(key, made);
    made.catch(() => {
      if (cache.get(key) === made) cache.delete(key);
    });
    p = made;
  }
  return p;
}

export async function loadSnapshot(db: Db, layout: WarehouseLayout, snapshot: string, cache: ResponseCache): Promise<ServedSnapshot> {
  const dir = publishedDir(layout, snapshot);
  const files = snapshotFiles(dir);
  const manifest = await readSnapshotManifest(files.manifest);

  const summaries = new Map<WindowName, Map<string, SummaryJson>>(WINDOW_NAMES.map((w) => [w, new Map()]));
  const platform = new Map<WindowName, PlatformJson>();
  const customerRows = new Map<WindowName, Map<string, PlatformJson>>(WINDOW_NAMES.map((w) => [w, new Map()]));
  let quality: Map<WindowName, Map<string, QualityJson>> | null = null;

  for (const { windowName, lastSeenAt, ...row } of await readStreamSummaries(db, { dir, manifest })) {
    summaries.get(windowName as WindowName)?.set(row.streamId, { ...row, lastSeenAt: lastSeenAt?.toISOString() ?? null });
  }
  await db.withSession(async (s) => {
    for (const { windowName, ...row } of await s.all<AddedUpRow>(`SELECT windowName, ${ADDED_UP_FIGURES} FROM read_parquet(${fileList([files.platform])})`)) {
      platform.set(windowName as WindowName, addedUp(row));
    }
    if (fs.existsSync(files.customers)) {
      const rows = await s.all<AddedUpRow & { customer: string }>(
        `SELECT windowName, customer, ${ADDED_UP_FIGURES} FROM read_parquet(${fileList([files.customers])}) ORDER BY customer`,
      );
      for (const { windowName, customer, ...row } of rows) customerRows.get(windowName as WindowName)?.set(customer, addedUp(row));
    }
    if (fs.existsSync(files.streamQuality)) {
      quality = new Map(WINDOW_NAMES.map((w) => [w, new Map()]));
      const rows = await s.all<QualityJson & { windowName: string; streamId: string }>(
        `SELECT windowName, streamId, ${QUALITY_FIGURES} FROM read_parquet(${fileList([files.streamQuality])})`,
      );
      for (const { windowName, streamId, ...row } of rows) quality.get(windowName as WindowName)?.set(streamId, row);
    }
  });
  return new ServedSnapshot(snapshot, dir, manifest, summaries, platform, customerRows, cache.forSnapshot(snapshot), quality, layout.rawReports);
}

const QUALITY_FIGURES = 'rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess';

/** A platform-wide or per-customer row of a snapshot (platform_summaries.parquet, customer_summaries.parquet). */
type AddedUpRow = Omit<StreamSummary, 'streamId'> & { streams: number };
const ADDED_UP_FIGURES = `streams, ${SUMMARY_FIGURES}`;

/** A platform-wide or per-customer row as the API serves it. */
function addedUp({ lastSeenAt, ...figures }: Omit<AddedUpRow, 'windowName'>): PlatformJson {
  return { ...figures, lastSeenAt: lastSeenAt?.toISOString() ?? null };
}

/** Follows CURRENT (watching the folder, and polling as a fallback) and holds the loaded snapshot. */
export class SnapshotStore {
  private snapshot: ServedSnapshot | null = null;
  private watcher: fs.FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private again: Promise<void> | null = null;
  /** The last snapshot that failed to load, retried only after a while rather than on every tick. */
  private failed: { id: string; at: number } | null = null;
  /** Why nothing is served although something is published (CURRENT or its manifest is damaged). */
  private unreadable: { file: string; why: string } | null = null;
  /** Told of each snapshot swapped in (the portal's live pages). */
  private readonly swapListeners = new Set<(snap: ServedSnapshot) => void>();

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    private readonly log: Logger,
    private readonly pollMs: number,
    /** Serialised responses of every snapshot served, bounded as a whole. */
    readonly responses: ResponseCache,
  ) {}

  current(): ServedSnapshot | null {
    return this.snapshot;
  }

  /** Calls `listener` with every snapshot swapped in from now on; the function returned stops it. */
  onSwap(listener: (snap: ServedSnapshot) => void): () => void {
    this.swapListeners.add(listener);
    return () => this.swapListeners.delete(listener);
  }

  /**
   * "No snapshot" becomes 503 snapshot_unreadable when something is published but cannot be read:
   * an operator's problem, not the "nothing published yet" of a fresh warehouse.
   */
  explain(err: unknown): unknown {
    if (err instanceof ApiError && err.code === 'snapshot_unavailable' && this.unreadable && !this.snapshot) return problems.snapshotUnreadable();
    return err;
  }

  async start(): Promise<void> {
    await this.refresh();
    fs.mkdirSync(this.layout.snapshots, { recursive: true });
    try {
      this.watcher = fs.watch(this.layout.snapshots, () => void this.refresh());
      this.watcher.on('error', (err) => this.log.warn({ err: err.message }, 'watching snapshots failed; polling only'));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'cannot watch snapshots; polling only');
    }
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Load the snapshot CURRENT names if it is new; one load at a time. A call during a load runs
   * one more check after it: a publication writes a temporary file and then renames it over
   * CURRENT, and the rename's event must not be lost in the check the first event started.
   */
  refresh(): Promise<void> {
    if (this.inFlight) {
      this.again ??= this.inFlight.then(() => {
        this.again = null;
        return this.refresh();
      });
      return this.again;
    }
    this.inFlight = this.load().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async load(): Promise<void> {
    let pointer;
    try {
      pointer = await readCurrent(this.layout);
    } catch (err) {
      const file = err instanceof SnapshotUnreadableError ? err.file : this.layout.currentPointer;
      const why = err instanceof SnapshotUnreadableError ? err.why : (err as Error).message;
      if (this.unreadable?.file !== file || this.unreadable.why !== why) {
        this.log.error({ file, err: why, serving: this.snapshot?.id ?? null }, 'CURRENT is unreadable; keeping the loaded snapshot');
      }
      this.unreadable = { file, why };
      return;
    }
    if (!pointer) this.unreadable = null;
    if (!pointer || pointer.snapshot === this.snapshot?.id) return;
    if (this.failed?.id === pointer.snapshot && Date.now() - this.failed.at < 30_000) return;
    const started = Date.now();
    try {
      const next = await loadSnapshot(this.db, this.layout, pointer.snapshot, this.responses);
      this.snapshot = next; // the swap: one assignment
      this.responses.serve(next.id);
      this.failed = null;
      this.unreadable = null;
      this.log.info({ snapshot: next.id, asOf: next.manifest.asOf, ms: Date.now() - started }, 'serving snapshot');
      snapshotSwapSeconds.observe((Date.now() - started) / 1000);
      for (const listener of this.swapListeners) listener(next);
    } catch (err) {
      this.failed = { id: pointer.snapshot, at: Date.now() };
      const file = snapshotFiles(publishedDir(this.layout, pointer.snapshot)).manifest;
      this.unreadable = { file, why: (err as Error).message.split('\n')[0]! };
      this.log.error(
        { snapshot: pointer.snapshot, file, err: (err as Error).message, serving: this.snapshot?.id ?? null },
        'cannot load the published snapshot; keeping the last good one',
      );
    }
  }
}
