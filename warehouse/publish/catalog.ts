// The analyst catalog: a small DuckDB database of views over the published snapshot and the
// deduplicated raw reports, with absolute paths so it works from any working directory.
// It is built under a temporary name by this process's own DuckDB and renamed into place.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../duckdb/index.ts';
import { fileList, quotedIdentifier, quotedString } from '../duckdb/index.ts';
import { emptyRawReportsSql } from '../session-reports/index.ts';
import { REPORT_COLUMNS } from '../session-reports/index.ts';
import { projectionSql, provenanceSql } from '../session-reports/index.ts';
import { schemaColumns } from '../landing/index.ts';
import type { InputFile } from '../snapshots/index.ts';
import { noPiecesSql, pieceSql } from '../figures/index.ts';
import { summaryParams } from './snapshot-summaries.ts';
import { fsyncDir } from '../../lib/fsx.ts';
import type { DbSession } from '../duckdb/index.ts';
import { breakdownFileSql, windowClass, windowClassParams } from '../reads/index.ts';
import { WINDOW_NAMES } from '../figures/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import type { SnapshotManifest } from '../snapshots/index.ts';
import { sessionClassFiles, snapshotFiles } from '../snapshots/index.ts';

const ALL_COLUMNS = REPORT_COLUMNS.map((c) => c.name);

/** Build the catalog for a snapshot folder under a temporary name; returns that name. */
export async function buildCatalog(db: Db, layout: WarehouseLayout, dir: string, manifest: SnapshotManifest): Promise<string> {
  const tmp = `${layout.catalog}.tmp-${randomBytes(4).toString('hex')}`;
  const files = snapshotFiles(dir);
  const customers = manifest.partitions.map((p) => p.customerId);
  const rawFiles = manifest.partitions.flatMap((p) => p.files);
  const present = new Set(manifest.partitions.flatMap((p) => p.presentColumns));
  const alias = `catalog_${randomBytes(4).toString('hex')}`;
  await db.withSession(async (s) => {
    await s.run(`ATTACH ${quotedString(tmp)} AS ${alias}`);
    try {
      const table = (name: string) => `${quotedIdentifier(alias)}.${quotedIdentifier(name)}`;
      if (customers.length > 0) {
        await s.run(
          `CREATE VIEW ${table('stream_summaries')} AS SELECT * FROM read_parquet(${fileList(customers.map(files.summaries))}, hive_partitioning = true)`,
        );
        // Series are one file per UTC day or per block of past days (date=… folders, a block in
        // its first day's); the view keeps its columns as before.
        await s.run(
          `CREATE VIEW ${table('stream_timeseries')} AS SELECT * EXCLUDE (date) FROM read_parquet(${fileList(customers.map(files.series))}, hive_partitioning = true)`,
        );
      } else {
        // No customer partition: empty tables of the right shape, from the rollup SQL itself.
        const pieces = `(${noPiecesSql()})`;
        const { params, types } = summaryParams(new Date(manifest.asOf), manifest.settings.activityHorizonSeconds);
        await s.run(
          `CREATE TABLE ${table('stream_summaries')} AS SELECT *, NULL::VARCHAR AS customer FROM (${pieceSql('stream_summaries', { classed: `(SELECT *, 5 AS class FROM ${pieces})` })}) LIMIT 0`,
          params,
          types,
        );
        await s.run(
          `CREATE TABLE ${table('stream_timeseries')} AS SELECT *, NULL::VARCHAR AS customer FROM (${pieceSql('series_combine', { pieces })}) LIMIT 0`,
          { bucket_seconds: 60 },
        );
      }
      await createSessionClasses(s, table, dir, manifest);
      await s.run(`USE ${alias}`);
      await s.run(
        breakdownFileSql('catalog_views', {
          window_classes: WINDOW_NAMES.map((w) => `(${quotedString(w)}, ${windowClass(w)})`).join(', '),
          platform: `read_parquet(${quotedString(files.platform)})`,
          customers: `read_parquet(${quotedString(files.customers)})`,
          raw: rawFiles.length > 0 ? rawReportsSql(layout, rawFiles, present) : `${emptyRawReportsSql(projectionSql(ALL_COLUMNS, new Set()))} LIMIT 0`,
          as_of: `TIMESTAMP ${quotedString(manifest.asOf.replace('T', ' ').replace('Z', ''))}`,
          snapshot: quotedString(manifest.snapshot),
          snapshot_dir: quotedString(dir),
        }),
      );
    } finally {
      await s.run(`USE memory`);
      await s.run(`DETACH ${alias}`);
    }
  });
  return tmp;
}

/**
 * The snapshot's session classes (snapshot-breakdowns.ts) as the table `session_classes`, with the
 * customer of each row: a view of the customers' files, or an empty table of their columns when
 * there are none (no customer, or a snapshot from before breakdowns).
 */
async function createSessionClasses(s: DbSession, table: (name: string) => string, dir: string, manifest: SnapshotManifest): Promise<void> {
  const files = sessionClassFiles(snapshotFiles(dir), manifest.partitions.map((p) => p.customerId));
  if (files.length > 0) {
    await s.run(`CREATE VIEW ${table('session_classes')} AS SELECT * FROM read_parquet(${fileList(files)}, hive_partitioning = true)`);
    return;
  }
  const { params, types } = windowClassParams(new Date(manifest.asOf));
  await s.run(`CREATE TABLE ${table('session_classes')} AS SELECT * FROM (${breakdownFileSql('session_classes', { pieces: `(${noPiecesSql()})` })}) LIMIT 0`, params, types);
}

/**
 * The snapshot's raw files as one relation. Files of one schema are read together without
 * matching columns by name, so that creating the view reads one footer per schema rather than
 * every file's (189 ms for the 810 files of 30 days, and growing with history, before). Where a
 * file's schema is not recorded (a state built before it was), every file is read by name, as
 * before.
 */
function rawReportsSql(layout: WarehouseLayout, files: readonly InputFile[], present: ReadonlySet<string>): string {
  const read = (list: readonly InputFile[], byName: boolean, columns: ReadonlySet<string>) =>
    `SELECT filename, file_row_number, ${provenanceSql(columns)}, ${projectionSql(ALL_COLUMNS, columns)} FROM read_parquet(${fileList(list.map((f) => path.join(layout.rawReports, f.path)))}, union_by_name = ${byName}, filename = true, file_row_number = true, hive_partitioning = false)`;
  if (files.some((f) => f.schema === undefined)) return read(files, true, present);
  const bySchema = new Map<string, InputFile[]>();
  for (const f of files) {
    const list = bySchema.get(f.schema!);
    if (list) list.push(f);
    else bySchema.set(f.schema!, [f]);
  }
  return [...bySchema.entries()]
    .map(([schema, list]) => read(list, false, new Set(schemaColumns(schema))))
    .join('\nUNION ALL\n');
}

/** Put a built catalog in place of the old one (readers keep the file they opened). */
export async function installCatalog(layout: WarehouseLayout, tmp: string): Promise<void> {
  await fs.rename(tmp, layout.catalog);
  await fsyncDir(path.dirname(layout.catalog));
}
