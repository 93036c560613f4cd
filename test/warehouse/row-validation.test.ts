// Poisoned files: for every column of docs/sdk-ingest.md, a file holding the worst value of each
// kind (NaN, ±Infinity, 1e30, a negative, a non-integral double, a value out of the type's range,
// a null id or ts) is quarantined with a reason naming the column, the rule and the row count,
// and the other files roll up. Files holding the extreme values the rules still accept pass,
// and every figure's SQL (rollups, pilot figures, exports, the catalog) runs over them: no CAST
// can fail on a row that passed validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath } from '../helpers/reports.ts';
import { expectSameRows, Independent, norm } from '../helpers/independent.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';
import { fileList, fillSql, quotedString, sqlFile } from '../../warehouse/duckdb/sql-text.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';
import { projectionSql, provenanceSql } from '../../warehouse/session-reports/projection.ts';
import { loadPilotFigures } from '../../pilot/figures.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
const DATE = '2026-11-20';

/** A good row, column by column, as SQL literals at the contract's types. */
const GOOD: Record<string, string> = {
  reportId: `'r'`,
  sessionId: `'s'`,
  viewerId: `'v'`,
  streamId: `'acme:live'`,
  ts: `TIMESTAMP '2026-11-20 11:50:00'`,
  intervalMs: '30000',
  seq: '0',
  final: 'false',
  cohort: `'p2p'`,
  contentType: `'live'`,
  bytesOffloaded: '100',
  bytesFallback: '300',
  bytesUploaded: '50',
  peerCount: '2',
  bufferHealth: '4.5',
  stallCount: '1',
  stallMs: '200',
  watchMs: '29800',
  startupMs: '900',
  bitrateKbps: '3000',
  p2pConnAttempts: '4',
  p2pConnSuccesses: '3',
  signalingErrors: '0',
  validationFailures: '0',
  busyPeerEvents: '1',
  fallbackReasons: `MAP {'no_peers': 2}`,
  deliveryMode: `'hybrid'`,
  bytesByPath: `MAP {'webrtc': 100, 'http': 300}`,
  device: `'desktop'`,
  region: `'eu-west'`,
  sdkVersion: `'3.2.1'`,
  signalingVersion: `'1.9.2'`,
};

/** SQL of one row: every column at its contract type, with `over` replacing some (type included). */
function rowSql(id: string, over: Record<string, string> = {}): string {
  return REPORT_COLUMNS.map((c) => {
    const v = over[c.name] ?? `CAST(${c.name === 'reportId' ? `'${id}'` : c.name === 'sessionId' ? `'s-${id}'` : GOOD[c.name]} AS ${c.type})`;
    return `${v} AS "${c.name}"`;
  }).join(', ');
}

interface Poison {
  file: string;
  column: string;
  /** The value, typed (the file stores the column at this type). */
  value: string;
  /** What the quarantine detail must say, after the column name. */
  rule: RegExp;
}

const NUMBER_COLUMNS = REPORT_COLUMNS.filter((c) => c.family === 'integer' || c.family === 'float');
const MAP_COLUMNS = REPORT_COLUMNS.filter((c) => c.family === 'map');
/** The bounds docs/sdk-ingest.md's types and the issue give, written out independently of the code. */
const OVER_RANGE: Record<string, { value: string; bound: string }> = {
  INTEGER: { value: '2147483648::BIGINT', bound: '2147483647' },
  BIGINT: { value: '1000000000001::BIGINT', bound: '1000000000000' },
  DOUBLE: { value: '86400.5::DOUBLE', bound: '86400' },
};

function poisons(): Poison[] {
  const out: Poison[] = [];
  const add = (column: string, kind: string, value: string, rule: RegExp) => out.push({ file: `${column}-${kind}.parquet`, column, value, rule });
  for (const c of NUMBER_COLUMNS) {
    add(c.name, 'nan', `'nan'::DOUBLE`, /^not finite/);
    add(c.name, 'inf', `'inf'::DOUBLE`, /^not finite/);
    add(c.name, 'minus-inf', `'-inf'::DOUBLE`, /^not finite/);
    add(c.name, '1e30', `1e30::DOUBLE`, /^above /);
    add(c.name, 'negative', `CAST(-1 AS ${c.type})`, /^negative/);
    add(c.name, 'negative-double', `-0.5::DOUBLE`, /^negative/);
    const over = OVER_RANGE[c.type]!;
    add(c.name, 'out-of-range', over.value, new RegExp(`^above ${over.bound}`));
    if (c.family === 'integer') add(c.name, 'fraction', `1.5::DOUBLE`, /^not a whole number/);
  }
  for (const c of MAP_COLUMNS) {
    const valueType = c.type.includes('BIGINT') ? 'BIGINT' : 'INTEGER';
    const m = (v: string) => `MAP {'x': ${v}}`;
    add(c.name, 'nan', m(`'nan'::DOUBLE`), /^a value not finite/);
    add(c.name, 'inf', m(`'inf'::DOUBLE`), /^a value not finite/);
    add(c.name, 'minus-inf', m(`'-inf'::DOUBLE`), /^a value not finite/);
    add(c.name, '1e30', m(`1e30::DOUBLE`), /^a value above /);
    add(c.name, 'negative', `CAST(MAP {'x': 1, 'y': -1} AS ${c.type})`, /^a value negative/);
    add(c.name, 'fraction', m(`1.5::DOUBLE`), /^a value not a whole number/);
    add(c.name, 'out-of-range', m(OVER_RANGE[valueType]!.value), new RegExp(`^a value above ${OVER_RANGE[valueType]!.bound}`));
  }
  add('ts', 'null', `NULL::TIMESTAMP`, /^null/);
  add('ts', 'infinity', `'infinity'::TIMESTAMP`, /^not finite/);
  for (const c of ['reportId', 'sessionId', 'streamId']) add(c, 'null', `NULL::VARCHAR`, /^null/);
  return out;
}

/**
 * The most extreme values the rules accept: the bounds themselves, stored as the contract types
 * and as doubles (whole numbers, as a JavaScript SDK writes them), and zeros.
 */
function extremes(asDouble: boolean): Record<string, string> {
  const over: Record<string, string> = {};
  for (const c of NUMBER_COLUMNS) {
    const max = c.type === 'INTEGER' ? '2147483647' : c.type === 'BIGINT' ? '1000000000000' : '86400';
    over[c.name] = asDouble ? `${max}::DOUBLE` : `CAST(${max} AS ${c.type})`;
  }
  over['fallbackReasons'] = asDouble ? `MAP {'no_peers': 2147483647::DOUBLE, 'low_buffer': 0::DOUBLE}` : `CAST(MAP {'no_peers': 2147483647, 'low_buffer': 0} AS MAP(VARCHAR, INTEGER))`;
  over['bytesByPath'] = asDouble ? `MAP {'webrtc': 1e12::DOUBLE, 'http': 0::DOUBLE}` : `CAST(MAP {'webrtc': 1000000000000, 'http': 0} AS MAP(VARCHAR, BIGINT))`;
  return over;
}

let wh: TestWarehouse;
let run: PipelineResult;
const POISONS = poisons();

async function writeFile(file: string, selects: string[]): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await wh.db.withSession((s) => s.run(`COPY (${selects.join(' UNION ALL BY NAME ')}) TO ${quotedString(file)} (FORMAT parquet)`));
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  const at = (name: string) => landingPath(wh.root, 'acme', DATE, name);
  await writeFile(at('good.parquet'), [`SELECT ${rowSql('g1')}`, `SELECT ${rowSql('g2', { bufferHealth: '0::DOUBLE', stallMs: '0::INTEGER' })}`]);
  await writeFile(at('extreme-native.parquet'), [`SELECT ${rowSql('e1', extremes(false))}`, `SELECT ${rowSql('e2')}`]);
  await writeFile(at('extreme-double.parquet'), [`SELECT ${rowSql('e3', extremes(true))}`, `SELECT ${rowSql('e4')}`]);
  // A stream of its own whose every value is the accepted extreme, for the pilot report.
  await writeFile(at('extreme-stream.parquet'), [0, 1, 2].map((i) => `SELECT ${rowSql(`x${i}`, { ...extremes(i % 2 === 0), streamId: `'acme:extreme'`, seq: `${i}::INTEGER`, sessionId: `'s-x'` })}`));
  // Each poison next to a good row of the same file: the whole file goes.
  for (const p of POISONS) {
    await writeFile(at(p.file), [`SELECT ${rowSql(`ok-${p.file}`)}`, `SELECT ${rowSql(`bad-${p.file}`, { [p.column]: p.value })}`]);
  }
  // Another customer, untouched by acme's poison.
  await writeFile(landingPath(wh.root, 'globex', DATE, 'g.parquet'), [`SELECT ${rowSql('o1', { streamId: `'globex:news'` })}`]);
  // The files as landed: compaction would merge the good ones first (test/warehouse/compaction.test.ts).
  run = await runPipeline(wh, { asOf: AS_OF, compact: false });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

describe('row validation', () => {
  it('quarantines every poisoned file with the column, the rule and the row count', async () => {
    const byFile = new Map(run.manifest.quarantined.map((q) => [path.basename(q.relPath), q]));
    for (const p of POISONS) {
      const q = byFile.get(p.file);
      expect(q, p.file).toBeDefined();
      expect(q!.reason, p.file).toBe('holds rows that break the session report contract');
      expect(q!.detail.startsWith(`${p.column} `), `${p.file}: ${q!.detail}`).toBe(true);
      expect(q!.detail.slice(p.column.length + 1), `${p.file}: ${q!.detail}`).toMatch(p.rule);
      expect(q!.detail, p.file).toMatch(/: 1 row$/);
      // Moved out of the landing area, with its reason beside it.
      const moved = path.join(wh.layout.quarantine, q!.relPath);
      await expect(fs.stat(moved)).resolves.toBeTruthy();
      const reason = JSON.parse(await fs.readFile(`${moved}.reason.json`, 'utf8')) as { detail: string };
      expect(reason.detail).toBe(q!.detail);
    }
    expect(run.manifest.quarantined).toHaveLength(POISONS.length);
  });

  it('rolls the other files up and publishes', async () => {
    expect(run.published).toBe(true);
    const files = run.manifest.partitions.flatMap((p) => p.files.map((f) => path.basename(f.path))).sort();
    expect(files).toEqual(['extreme-double.parquet', 'extreme-native.parquet', 'extreme-stream.parquet', 'g.parquet', 'good.parquet']);
    // Figures against plain SQL over the files left in the landing area.
    const ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
    const snap = (await currentSnapshot(wh.layout))!;
    const ours = (await readStreamSummaries(wh.db, snap, 'all')).map((r) => ({ ...r, lastSeenAt: r.lastSeenAt }));
    const theirs = await ind.summaries('all');
    expectSameRows(
      ours.map((r) => ({ ...r, lastSeenAt: r.lastSeenAt === null ? null : new Date(r.lastSeenAt).toISOString() })),
      theirs.map((r) => ({ ...r, lastSeenAt: norm(r['lastSeenAt']) })),
      'all window over the accepted files',
    );
  });

  it('runs the pilot figures, the export and the catalog over the extremes without a failing cast', async () => {
    const acme = run.manifest.partitions.find((p) => p.customerId === 'acme')!;
    const inputs = { files: acme.files.map((f) => path.join(wh.layout.rawReports, f.path)), presentColumns: acme.presentColumns };
    const figures = await wh.db.withSession((s) => loadPilotFigures(s, inputs, null, AS_OF, 60));
    expect([...figures.keys()].sort()).toEqual(['acme:extreme', 'acme:live']);
    const extreme = figures.get('acme:extreme')!;
    expect(extreme).toBeDefined();

    // The export's own SQL, every column cast to its contract type (one slice: all time to asOf).
    const AS_OF_NEXT = new Date(AS_OF.getTime() + 1);
    const exported = await wh.db.withSession((s) =>
      s.all<Record<string, unknown>>(
        fillSql(sqlFile('export_reports'), {
          files: fileList(inputs.files),
          projection: projectionSql(REPORT_COLUMNS.map((c) => c.name), new Set(inputs.presentColumns)),
          provenance: provenanceSql(new Set(inputs.presentColumns)),
        }),
        { stream_id: 'acme:extreme', as_of: timestampParam(AS_OF), lower: null, from: timestampParam(new Date(0)), until: timestampParam(AS_OF_NEXT) },
        { stream_id: VARCHAR, as_of: TIMESTAMP, lower: TIMESTAMP, from: TIMESTAMP, until: TIMESTAMP },
      ),
    );
    expect(exported).toHaveLength(3);
    expect(norm(exported[0]!['bytesOffloaded'])).toBe(1e12);
    expect(exported[0]!['stallMs']).toBe(2147483647);
    expect(exported[0]!['bufferHealth']).toBe(86400);

    // The analyst catalog: every column of every accepted report, cast.
    const instance = await DuckDBInstance.create(wh.layout.catalog, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(`SELECT count(*) AS n, sum(stallMs) AS s, max(bufferHealth) AS b FROM session_reports`);
      const [row] = reader.getRowObjectsJS();
      expect(norm(row!['n'])).toBe(2 + 2 + 2 + 3 + 1);
      expect(row!['b']).toBe(86400);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
