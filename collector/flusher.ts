// The flusher: turns the spool into Parquet files of the landing area, per (customer, UTC date)
// partition, with the column types of docs/sdk-ingest.md (the types `generate` writes). DuckDB
// writes each sealed segment into this host's scratch folder; each file is fsynced, renamed into
// raw/session_reports/customer=…/date=…/ and its folder fsynced; then the segment is deleted. A
// crash at any point lands the segment again at the next start: at least once, and the copies are
// the same reports (dedup by reportId downstream). No half-written file is ever in the landing area.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../warehouse/duckdb/index.ts';
import { fileList, fillSql, quotedIdentifier, quotedString, sqlFile } from '../warehouse/duckdb/index.ts';
import { REPORT_COLUMNS } from '../warehouse/session-reports/index.ts';
import { hostScratchDir, type WarehouseLayout } from '../warehouse/layout.ts';
import { fsyncDir, fsyncFile, linkNoReplace, listFiles } from '../lib/fsx.ts';
import type { Logger } from '../lib/log.ts';
import type { Segment, Spool } from './spool.ts';
import { observeLanding } from './metrics.ts';

/**
 * Land one spool segment: its reports as Parquet with the catalog's column types, one file per
 * (customer, UTC date), into {{dir}}. `field` says where a column is in a line, `ts` where the
 * report's ts in epoch µs is, and `columns` how read_json reads a line.
 * A line cut by a crash reads as a row of nulls (ignore_errors): it was never acknowledged.
 * The date partitions by its DATE value (written date=YYYY-MM-DD, as a string would be, without
 * a string made per report: 7 % of landing's time).
 */
function landSegmentSql(form: { columns: string; field: (name: string) => string; ts: string }): string {
  const ts = `make_timestamp(${form.ts})`;
  const select = REPORT_COLUMNS.map((c) => (c.name === 'ts' ? `${ts} AS ts` : `${form.field(c.name)} AS ${quotedIdentifier(c.name)}`)).join(', ');
  return `
COPY (
  SELECT ${select},
         split_part(${form.field('streamId')}, ':', 1) AS customer,
         CAST(${ts} AS DATE) AS date
  FROM read_json({{segment}}, format = 'newline_delimited', ignore_errors = true, columns = ${form.columns})
  WHERE ${form.field('reportId')} IS NOT NULL AND ${form.field('streamId')} IS NOT NULL AND ${form.ts} IS NOT NULL
) TO {{dir}} (FORMAT parquet, PARTITION_BY (customer, date), FILENAME_PATTERN {{pattern}})`;
}

/** The report's columns but ts, as DuckDB reads them from JSON: the catalog's types. */
const REPORT_STRUCT = `STRUCT(${REPORT_COLUMNS.filter((c) => c.name !== 'ts').map((c) => `${quotedIdentifier(c.name)} ${c.type}`).join(', ')})`;

/**
 * The wrapped form (seg-N.r.ndjson): {"tsu": ts in epoch µs, "r": the report as posted (its own
 * `ts` text, and any field not in the catalog, are not read)}.
 */
const LAND_WRAPPED_SQL = landSegmentSql({
  columns: `{'tsu': 'BIGINT', 'r': ${quotedString(REPORT_STRUCT)}}`,
  field: (name) => `r.${quotedIdentifier(name)}`,
  ts: 'tsu',
});

/** The flat form (seg-N.ndjson, left by collectors before the wrapped form): the columns, `ts` in epoch µs. */
const LAND_FLAT_SQL = landSegmentSql({
  columns: `{${REPORT_COLUMNS.map((c) => `${quotedString(c.name)}: ${quotedString(c.name === 'ts' ? 'BIGINT' : c.type)}`).join(', ')}}`,
  field: quotedIdentifier,
  ts: 'ts',
});

export interface FlushPolicy {
  /** Seal and land the open segment once it is this old... */
  intervalMs: number;
  /** ...or holds this many reports. */
  reports: number;
}

/** What a tick lands: `false` the timer's check (the policy), `'all'` everything now (flushAll), `{ minAgeMs }` landNow's. */
type TickMode = false | 'all' | { minAgeMs: number };

export interface LandedSegment {
  seq: number;
  rows: number;
  files: string[];
}

export class Flusher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private failures = 0;
  private retryAt = 0;
  private sealing: Promise<unknown> | null = null;
  private readonly landedListeners: ((landed: LandedSegment) => void)[] = [];

  constructor(
    private readonly spool: Spool,
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    private readonly policy: FlushPolicy,
    private readonly log: Logger,
  ) {}

  /**
   * Check five times a second whether the open segment is due, and land what is sealed: at 240,000
   * reports/s a segment overshoots COLLECTOR_FLUSH_REPORTS by at most ~50,000 (checked once a
   * second, the first of a saturated run held 480,000, and landing it took the collector's RSS to
   * ~800 MB).
   */
  start(): void {
    const every = Math.max(50, Math.min(200, Math.floor(this.policy.intervalMs / 4)));
    this.timer = setInterval(() => void this.tick(false), every);
    this.timer.unref();
    void this.tick(false);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Call `listener` after each segment lands (an inline rollup in the same process starts then). */
  onLanded(listener: (landed: LandedSegment) => void): void {
    this.landedListeners.push(listener);
  }

  /** Seal whatever the open segment holds and land every sealed segment (SIGTERM, tests). */
  async flushAll(): Promise<void> {
    while (this.running) await this.running;
    this.retryAt = 0;
    await this.tick('all');
    if (this.spool.sealed().length > 0) throw new Error('some spool segments could not be landed (see the log)');
  }

  /**
   * Land now what the spool holds, for an inline rollup about to start (`start`): the open segment
   * is sealed if it has been open at least `minAgeMs` (so that runs in a row do not land a file
   * each of a few reports), then every sealed segment lands. A landing in flight is waited for; a
   * flusher backing off after a failure does not try again before its time. Never throws: a
   * failure is logged and retried as the timer's are.
   */
  async landNow(minAgeMs: number): Promise<void> {
    while (this.running) await this.running;
    await this.tick({ minAgeMs });
  }

  private tick(mode: TickMode): Promise<void> {
    if (this.running) {
      // While a segment lands, the open one is still sealed when due: a segment stays near the
      // policy's size however far landing lags (at saturation one open segment grew to 1.4 GB
      // while earlier ones landed, and then landed as one).
      this.sealIfDue();
      return this.running;
    }
    this.running = this.work(mode).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Whether the open segment holds the policy's reports, or has been open its time. */
  private due(): boolean {
    const open = this.spool.openSegment();
    return open.reports >= this.policy.reports || (open.reports > 0 && Date.now() - open.openedAt >= this.policy.intervalMs);
  }

  private sealIfDue(): void {
    if (this.sealing || this.spool.failed() || !this.due()) return;
    // A seal that fails stops the spool (logged there); the next landing attempt reports it.
    this.sealing = this.spool
      .seal()
      .catch(() => null)
      .finally(() => {
        this.sealing = null;
      });
  }

  /** Whether `mode` seals the open segment now, beside the policy's `due`. */
  private sealsNow(mode: TickMode): boolean {
    const open = this.spool.openSegment();
    if (mode === 'all') return open.bytes > 0;
    if (mode === false) return false;
    return open.reports > 0 && Date.now() - open.openedAt >= mode.minAgeMs;
  }

  private async work(mode: TickMode): Promise<void> {
    if (mode !== 'all' && Date.now() < this.retryAt) return;
    try {
      // A spool that cannot write cannot seal either (it tries again on its own): what is sealed
      // already is landed meanwhile.
      if (!this.spool.failed() && (this.sealsNow(mode) || this.due())) await this.spool.seal();
      for (const segment of [...this.spool.sealed()]) {
        const started = performance.now();
        const landed = await this.land(segment);
        await this.spool.remove(segment);
        observeLanding((performance.now() - started) / 1000, landed.rows);
        this.log.info({ segment: segment.seq, rows: landed.rows, files: landed.files.length }, 'flusher: segment landed');
        for (const listener of this.landedListeners) listener(landed);
      }
      this.failures = 0;
    } catch (err) {
      // The segment stays in the spool; try again later, backing off up to 15 s.
      this.failures++;
      this.retryAt = Date.now() + Math.min(15_000, 500 * 2 ** Math.min(this.failures, 5));
      this.log.error({ err, failures: this.failures }, 'flusher: landing failed; will retry');
    }
  }

  /**
   * Land one sealed segment: Parquet per partition, each file complete before it appears, under
   * names made from the segment's key (unique forever), never replacing a file.
   */
  private async land(segment: Segment): Promise<LandedSegment> {
    const scratch = path.join(hostScratchDir(this.layout), `collector-${process.pid}-${segment.key}-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(scratch, { recursive: true });
    try {
      const stem = `ingest-${this.spool.id}-${segment.key}`;
      const rows = await this.db.withSession((s) =>
        s.run(fillSql(segment.form === 'wrapped' ? LAND_WRAPPED_SQL : LAND_FLAT_SQL, { segment: quotedString(segment.file), dir: quotedString(scratch), pattern: quotedString(`${stem}-{i}`) })),
      );
      const files: string[] = [];
      for (const [rel, written] of groupByFolder(scratch, await listFiles(scratch, '.parquet'))) {
        files.push(...(await this.landPartition(path.join(this.layout.rawReports, rel), written, stem, scratch)));
      }
      // The partition folders made for them, and their parents, survive a crash.
      const parents = new Set(files.map((f) => path.dirname(path.dirname(f))));
      for (const p of parents) await fsyncDir(p);
      if (parents.size > 0) await fsyncDir(this.layout.rawReports);
      return { seq: segment.seq, rows, files };
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Place one partition's files of a segment in `dir`. Files of this segment already there were
   * placed by an attempt that a crash cut short: when they hold all of its rows, nothing is placed
   * again; when only some (a partition written as several files), the rest go in one more file.
   */
  private async landPartition(dir: string, written: string[], stem: string, scratch: string): Promise<string[]> {
    await fs.mkdir(dir, { recursive: true });
    const earlier = (await fs.readdir(dir)).filter((n) => n.startsWith(`${stem}-`) && n.endsWith('.parquet')).map((n) => path.join(dir, n));
    let place = written;
    if (earlier.length > 0) {
      const rest = path.join(scratch, `rest-${randomBytes(4).toString('hex')}.parquet`);
      const left = await this.db.withSession((s) => s.run(fillSql(sqlFile('landing_rest'), { written: fileList(written), landed: fileList(earlier), target: quotedString(rest) })));
      this.log.warn({ dir, stem, landed: earlier.length, rowsLeft: left }, 'flusher: this segment was partly landed before a restart; landing only what is missing');
      place = left > 0 ? [rest] : [];
    }
    const placed: string[] = [];
    for (const file of place) {
      await fsyncFile(file);
      const name = place === written ? path.basename(file) : `${stem}-rest-${randomBytes(4).toString('hex')}.parquet`;
      placed.push(await this.place(file, path.join(dir, name)));
    }
    if (placed.length > 0) await fsyncDir(dir);
    return placed;
  }

  /**
   * Link `file` in as `target`, never replacing a file: a name taken by another (which only a
   * spool id shared by two collectors could cause) is logged and the file placed under another.
   */
  private async place(file: string, target: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const name = attempt === 0 ? target : target.replace(/\.parquet$/, `-c${randomBytes(4).toString('hex')}.parquet`);
      if (await linkNoReplace(file, name)) return name;
      this.log.error({ target: name }, 'flusher: a landed file already has this name; placing the file under another name');
      if (attempt >= 5) throw new Error(`could not find a free name for ${path.basename(target)}`);
    }
  }
}

/** Written files grouped by their partition folder (relative to `root`). */
function groupByFolder(root: string, files: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const file of files) {
    const rel = path.relative(root, path.dirname(file));
    groups.set(rel, [...(groups.get(rel) ?? []), file]);
  }
  return groups;
}
