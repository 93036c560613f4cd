// The deduplicated raw reports of partition states' own input files, for the parts of a snapshot
// that states cannot serve from their pieces: the hours that a window edge cuts, and a day that
// holds reports after asOf (state-combine.ts).
import path from 'node:path';
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';
import { dedupRawReports } from '../session-reports/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';
import { projectionSql, provenanceSql } from '../session-reports/index.ts';
import type { StateMeta } from './state-store.ts';
import type { WarehouseLayout } from '../layout.ts';

/**
 * The deduplicated reports of `states`' own input files that match `where` (a filter built by code
 * from constants), as `reports` (and `raw_reports`, the rows read); returns the rows read.
 */
export async function loadStateReports(s: DbSession, layout: WarehouseLayout, states: readonly StateMeta[], where: string): Promise<number> {
  const files = states.flatMap((m) => m.files.map((f) => path.join(layout.rawReports, f.path)));
  const present = new Set(states.flatMap((m) => m.presentColumns));
  await s.run(
    fillSql(sqlFile('load_raw'), { kind: 'TABLE', files: fileList(files), projection: projectionSql(STATE_COLUMNS, present), provenance: provenanceSql(present), where }),
  );
  await dedupRawReports(s, files, null);
  return (await s.one<{ n: number }>(sqlFile('raw_reports_read'))).n;
}
