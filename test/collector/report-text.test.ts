// The spool keeps a posted report's own text when it can be told for sure (collector/session-report-spans.ts,
// collector/batch.ts). Held here to two things:
// - the spans and key counts of hand-written bodies;
// - random bodies, JSON and NDJSON, full of what could make the kept text differ from what
//   JSON.parse read (duplicate keys plain and escaped, in reports, maps and the wrapper; unknown
//   fields; escapes; line breaks between tokens; blank and broken lines; numbers written as 1.0,
//   1e3, -0): landed by the real flusher, they
//   give the same rows as the same reports validated and serialised (the flat spool form, landed
//   by the flusher's other reader, as collectors wrote the spool before).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { reportSpans } from '../../collector/session-report-spans.ts';
import { checkBatchSync } from '../../collector/batch.ts';
import { checkReport } from '../../collector/session-report-schema.ts';
import { Spool } from '../../collector/spool.ts';
import { Flusher } from '../../collector/flusher.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { loadConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { sampleReport } from '../helpers/collector.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const WINDOW = { latestMs: NOW + 600_000, earliestMs: NOW - 35 * 86_400_000 };
const LIMITS = { maxInflatedBytes: 8 * 2 ** 20, maxReports: 2000 };
const bytes = (s: string) => Buffer.from(s);
const texts = (body: string, capacity: number) => {
  const b = bytes(body);
  const s = reportSpans(b, capacity);
  if (s === null) return null;
  const texts = Array.from(s.start.subarray(0, s.count), (from, i) => b.subarray(from, s.end[i]).toString());
  // The text around the reports' array, as the batch parses it to check the wrapper.
  const around = `${b.subarray(0, s.arrayOpen + 1).toString()}${b.subarray(s.arrayClose).toString()}`;
  return { texts, keys: [...s.keys.subarray(0, s.count)], topKeys: s.topKeys, around };
};

describe('report spans', () => {
  it('find each report and count its keys, by hand-worked bodies', () => {
    expect(texts('[{"a":1},{"b":{"c":2,"d":3}}]', 2)).toEqual({ texts: ['{"a":1}', '{"b":{"c":2,"d":3}}'], keys: [1, 3], topKeys: -1, around: '[]' });
    expect(texts(' { "meta" : {"x":"y:z"} ,\n "reports" : [ {"a" : "q\\":"} ,\r\n\t{ } ] , "z":1 } ', 5)).toEqual({
      texts: ['{"a" : "q\\":"}', '{ }'],
      keys: [1, 0],
      topKeys: 3,
      around: ' { "meta" : {"x":"y:z"} ,\n "reports" : [] , "z":1 } ',
    });
    // Backslashes before a closing quote; a colon and brackets inside strings count for nothing.
    expect(texts('[{"a\\\\":"[{:}]\\\\","b":"\\"}"}]', 1)).toEqual({ texts: ['{"a\\\\":"[{:}]\\\\","b":"\\"}"}'], keys: [2], topKeys: -1, around: '[]' });
    expect(texts('[]', 0)).toEqual({ texts: [], keys: [], topKeys: -1, around: '[]' });
    expect(texts('{"reports":[1,"x",null,[2]]}', 4)).toEqual({ texts: ['1', '"x"', 'null', '[2]'], keys: [-1, -1, -1, -1], topKeys: 1, around: '{"reports":[]}' });
  });

  it('give up where they cannot be told for sure', () => {
    expect(texts('{"reports":[{"a":1}],"reports":[{"b":2}]}', 1)).toBeNull(); // JSON.parse reads the second
    expect(texts('{"x":[{"a":1}]}', 1)).toBeNull(); // no "reports" key written plainly
    expect(texts('[{"a":1},{"b":2}]', 1)).toBeNull(); // more reports than it may hold
    expect(texts('"reports"', 0)).toBeNull();
    // An escaped "reports" key is not found here; its wrapper's keys are counted, and the batch
    // compares them with the parsed object's (one key, where the text has two).
    expect(texts('{"reports":[{"a":1}],"\\u0072eports":[{"b":2}]}', 1)).toEqual({ texts: ['{"a":1}'], keys: [1], topKeys: 2, around: '{"reports":[],"\\u0072eports":[{"b":2}]}' });
  });
});

/** A small seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ESCAPED_KEYS: Record<string, string> = { region: '"\\u0072egion"', device: '"dev\\u0069ce"', viewerId: '"viewer\\u0049d"' };

/** One report written by hand, with what random() picks of the tricky forms. */
function reportText(random: () => number, n: number): string {
  const pick = (p: number) => random() < p;
  const ws = () => (pick(0.1) ? [' ', '\n', '\r\n', '\t', '  '][Math.floor(random() * 5)]! : '');
  const r = sampleReport(`acme:live-${n % 3}`, new Date(NOW - 3_600_000 + n * 1000), n) as Record<string, unknown>;
  if (pick(0.2)) r['region'] = ['eu"west', 'é\\x:', '\u00e9t\u00e9 🎥', 'a:b'][Math.floor(random() * 4)];
  if (pick(0.1)) r['ts'] = NOW - 60_000 - n; // epoch ms
  if (pick(0.1)) r['ts'] = '2026-11-20T12:58:00.1234567+01:00';
  if (pick(0.05)) r['bytesUploaded'] = -1; // rejected
  const entries: string[] = [];
  for (const [k, v] of Object.entries(r)) {
    const key = pick(0.05) && ESCAPED_KEYS[k] ? ESCAPED_KEYS[k] : JSON.stringify(k);
    let value = JSON.stringify(v);
    if (k === 'stallCount' && pick(0.2)) value = ['0.0', '0e3', '-0'][Math.floor(random() * 3)]!;
    if (k === 'bitrateKbps' && pick(0.2)) value = ['3e3', '3000.0', '30E2'][Math.floor(random() * 3)]!;
    if (k === 'bufferHealth' && pick(0.2)) value = '1.25e1';
    if (k === 'fallbackReasons' && pick(0.15)) value = pick(0.5) ? '{"no_peers":1,"no_peers":2}' : '{"no_peers":1,"\\u006eo_peers":3}';
    if (k === 'region' && pick(0.1)) value = `"\\u0065u-west"`;
    entries.push(`${ws()}${key}${ws()}:${ws()}${value}${ws()}`);
    // A duplicate key, plain or escaped, with another value: JSON.parse keeps the last.
    if (k === 'region' && pick(0.08)) entries.push(`${pick(0.5) ? '"region"' : ESCAPED_KEYS['region']}:"dup-${n}"`);
    if (k === 'bytesOffloaded' && pick(0.05)) entries.push(`"bytesOffloaded":${n * 7}`);
  }
  if (pick(0.1)) entries.push(`"extra":{"x":[1,{"y":"a:b"}],"z":"}"}`); // unknown: dropped
  return `{${entries.join(',')}${ws()}}`;
}

/** An NDJSON body: a report per line, around them blank lines, spaces, CRLF and a broken line. */
function ndjsonText(random: () => number, reports: string[]): string {
  const lines = reports.map((r) => `${random() < 0.2 ? ' \t' : ''}${r.replace(/\n/g, ' ')}${random() < 0.2 ? '\r' : ''}`);
  if (random() < 0.3) lines.splice(Math.floor(random() * lines.length), 0, random() < 0.5 ? '   ' : '{oops');
  return `${lines.join('\n')}${random() < 0.5 ? '\n' : ''}`;
}

function bodyText(random: () => number, reports: string[]): string {
  const list = `[${reports.join(random() < 0.2 ? ',\n' : ',')}]`;
  const form = random();
  if (form < 0.3) return list;
  if (form < 0.8) return `{"reports":${list}}`;
  if (form < 0.9) return `{"meta":{"sdk":"x:y","n":[1,2]},\n"reports": ${list}, "z": {"a":1}}`;
  // The array JSON.parse reads is under an escaped "reports" written second; the first holds as
  // many reports, with the same ids and other values.
  return `{"reports":[${reports.map((r) => r.replace('"desktop"', '"mobile"')).join(',')}],"\\u0072eports":${list}}`;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

/** Land one spool segment file with the real spool and flusher; the landed rows, by reportId. */
async function land(name: string, lines: Buffer): Promise<unknown[][]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-text-'));
  dirs.push(dir);
  const layout = warehouseLayout(path.join(dir, 'warehouse'));
  const spoolDir = path.join(dir, 'spool');
  await fs.mkdir(spoolDir, { recursive: true });
  await fs.writeFile(path.join(spoolDir, name), lines);
  const spool = await Spool.open(spoolDir, silentLogger);
  const config = loadConfig({ overrides: { WAREHOUSE_DIR: layout.root } });
  const db = await Db.open({ ...config.duckdb, threads: 1, maxConcurrent: 1 }, path.join(dir, 'spill'));
  try {
    await new Flusher(spool, db, layout, { intervalMs: 60_000, reports: 1_000_000 }, silentLogger).flushAll();
  } finally {
    await spool.close();
    await db.close();
  }
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = await duck.runAndReadAll(
    `SELECT * FROM read_parquet('${layout.rawReports}/**/*.parquet', hive_partitioning = false) ORDER BY reportId, ts`,
  );
  return rows.getRowsJson() as unknown[][];
}

describe('a report kept as posted', () => {
  it('lands as the same row as the same report validated and serialised, over 400 random bodies', async () => {
    const random = rng(20261126);
    const wrapped: Buffer[] = [];
    const flat: string[] = [];
    let accepted = 0;
    let kept = 0;
    let keptFromLines = 0;
    for (let b = 0; b < 400; b++) {
      const reports = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, i) => reportText(random, b * 10 + i));
      const ndjson = random() < 0.3;
      let body = bytes(ndjson ? ndjsonText(random, reports) : bodyText(random, reports));
      // Now and then bytes that are not UTF-8 inside a string: read as U+FFFD by the collector's
      // decoder, so such a body is serialised rather than kept.
      const at = body.indexOf('"sessionId":"sess-');
      if (random() < 0.1 && at >= 0) body = Buffer.concat([body.subarray(0, at + 13), Buffer.from([0xff, 0xc3]), body.subarray(at + 13)]);
      const text = new TextDecoder().decode(body);
      const outcome = checkBatchSync(body, { gzip: false, ndjson, customerId: 'acme', window: WINDOW }, LIMITS);
      // The reports as JSON.parse reads the body (a line at a time for NDJSON, its blank lines left
      // out and its broken ones refused), validated and serialised: the spool's flat form.
      const parseLine = (line: string): unknown[] => {
        try {
          return [JSON.parse(line)];
        } catch {
          return [];
        }
      };
      const json = ndjson ? null : (JSON.parse(text) as unknown);
      const list = ndjson
        ? text.split('\n').filter((l) => l.trim() !== '').flatMap(parseLine)
        : ((Array.isArray(json) ? json : (json as { reports: unknown[] }).reports) as unknown[]);
      const expected = list.map((v) => checkReport(v, WINDOW)).flatMap((r) => (r.ok ? [JSON.stringify(r.report)] : []));
      if (!outcome.ok) {
        expect(expected, text).toEqual([]);
        continue;
      }
      expect(outcome.accepted, text).toBe(expected.length);
      flat.push(...expected);
      wrapped.push(Buffer.from(outcome.lines));
      accepted += outcome.accepted;
      // How many lines kept the posted text (the rest were serialised): both paths must be taken.
      // (A serialised report carries ts as epoch µs, like tsu; a posted one as it was posted.)
      for (const line of Buffer.from(outcome.lines).toString().trimEnd().split('\n')) {
        const l = JSON.parse(line) as { tsu: number; r: { ts: unknown } };
        if (l.r.ts !== l.tsu) {
          kept++;
          if (ndjson) keptFromLines++;
        }
      }
    }
    expect(accepted).toBeGreaterThan(1000);
    expect(kept).toBeGreaterThan(accepted / 2);
    expect(kept).toBeLessThan(accepted);
    expect(keptFromLines).toBeGreaterThan(200); // NDJSON lines are kept as posted too
    const ours = await land('seg-000000000001.r.ndjson', Buffer.concat(wrapped));
    const theirs = await land('seg-000000000001.ndjson', Buffer.from(`${flat.join('\n')}\n`));
    expect(ours.length).toBe(accepted);
    expect(ours).toEqual(theirs);
  });
});

describe('a JSON body read a report at a time', () => {
  // The batch parses each report's bytes on its own, and the text around the reports' array on its
  // own (collector/batch.ts, jsonReports), falling back to the whole text when they do not parse.
  // Held to what JSON.parse says of the whole body: the same verdict on random bodies made invalid
  // in the places that reading skips (between reports, around the array, inside one report).
  const BREAKS: [string, (body: string) => string][] = [
    ['a report cut short', (b) => b.replace(/"seq":\d+/, '"seq":tru')],
    ['an empty element', (b) => b.replace('},{', '},,{')],
    ['two reports without a comma', (b) => b.replace('},{', '} {')],
    ['a comma after the last report', (b) => b.replace(/}\s*]/, '},]')],
    ['garbage after the body', (b) => `${b} x`],
    ['a broken value beside the array', (b) => (b.startsWith('{') ? b.replace('{', '{"meta":{"a":1,},') : `${b},`)],
    ['a byte order mark', (b) => `\ufeff${b}`],
    ['a second body', (b) => `${b}${b}`],
  ];

  it('refuses as invalid JSON exactly the bodies JSON.parse refuses, and reads the others as it does', () => {
    const random = rng(7);
    let refused = 0;
    for (let n = 0; n < 240; n++) {
      const reports = Array.from({ length: 2 + Math.floor(random() * 4) }, (_, i) => reportText(random, n * 10 + i));
      const [name, breakIt] = BREAKS[n % BREAKS.length]!;
      const text = n % 3 === 0 ? bodyText(random, reports) : breakIt(bodyText(random, reports));
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const outcome = checkBatchSync(bytes(text), { gzip: false, ndjson: false, customerId: 'acme', window: WINDOW }, LIMITS);
      if (parsed === undefined) {
        refused++;
        expect(outcome, `${name}: ${text}`).toMatchObject({ ok: false, reports: null, problem: { code: 'invalidJson', detail: 'The body is not valid JSON.' } });
        expect(Object.keys(outcome).sort()).toEqual(['ok', 'problem', 'reports', 'work']);
        continue;
      }
      const list = (Array.isArray(parsed) ? parsed : (parsed as { reports: unknown[] }).reports) as unknown[];
      const verdicts = list.map((v) => checkReport(v, WINDOW));
      const accepted = verdicts.filter((v) => v.ok).length;
      const rejected = verdicts.flatMap((v, index) => (v.ok ? [] : [{ index, field: v.field, reason: v.reason }]));
      if (accepted === 0) expect(outcome, text).toMatchObject({ ok: false, problem: { code: 'allRejected', rejected } });
      else expect(outcome, text).toMatchObject({ ok: true, reports: list.length, accepted, rejected });
    }
    expect(refused).toBeGreaterThan(100);
  });
});
