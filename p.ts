import { loadConfig } from './lib/config.ts';
import { silentLogger } from './lib/log.ts';
import { openJobDeps } from './jobs/deps.ts';
import { customerFiles } from './warehouse/landing.ts';
import { loadCustomerReports } from './warehouse/partition-load.ts';
import { sqlFile } from './warehouse/duckdb.ts';
import { summaryParams, timestampParam } from './warehouse/partition-rollup.ts';
import { TIMESTAMP } from '@duckdb/node-api';
const deps = await openJobDeps(loadConfig({ warehouseDir: '/tmp/wh5' }), silentLogger);
const asOf = new Date('2026-11-20T06:00:00Z');
await deps.db.withSession(async (s) => {
  let t = Date.now();
  const lap = (l: string) => { console.log(l, Date.now() - t, 'ms'); t = Date.now(); };
  const files = await customerFiles(deps.layout, 'acme');
  // skip quarantine: just load
  await loadCustomerReports({ s, layout: deps.layout, customerId: 'acme', runId: 'x', log: silentLogger }, files);
  lap('load+validate');
  await s.run(sqlFile('validate_rows'), { customer: 'acme', stream_id_regex: 'x' }); lap('validate again');
  await s.run(sqlFile('dedup_reports'), { as_of: timestampParam(asOf) }, { as_of: TIMESTAMP }); lap('dedup');
  await s.run(`CREATE TEMP TABLE r2 AS SELECT DISTINCT ON (reportId) * FROM raw_reports`); lap('dedup distinct on');
  const { params, types } = summaryParams(asOf, 120);
  await s.run(`CREATE TEMP TABLE ss AS ${sqlFile('stream_summaries')}`, params, types); lap('summaries');
  for (const b of [60, 300, 600, 3600, 21600, 86400]) { await s.run(`CREATE OR REPLACE TEMP TABLE bs AS ${sqlFile('bucket_series')}`, { bucket_seconds: b }); lap('series ' + b); }
});
await deps.close();
