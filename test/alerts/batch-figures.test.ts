// Alert figures batched: many questions (two customers, every alert window (5m and 15m apart), one stream or a tenant's
// streams, several filters each, one that keeps no session) answered by one statement; each
// question's figures equal the breakdown route's own computation of it alone, and independent SQL
// over the raw reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { expectSameFigure, type IndependentFilters } from '../helpers/independent.ts';
import { questionsFigures, type Question } from '../../alerts/rule-figures.ts';
import { breakdownRows } from '../../served/ondemand-breakdowns.ts';
import { parseFilters } from '../../served/breakdown-filters.ts';
import { NO_SESSIONS } from '../../warehouse/reads/breakdowns.ts';
import { batchSql, type BatchQuestion } from '../../warehouse/reads/breakdown-batch.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);

afterAll(async () => {
  await t?.close();
});

const QUESTIONS: Question[] = [
  { customerId: 'acme', streamId: null, window: '1h', filters: ['device:mobile'] },
  { customerId: 'acme', streamId: null, window: '24h', filters: ['device:desktop', 'device:mobile', '!region:eu-west'] },
  { customerId: 'acme', streamId: 'acme:live-main', window: '24h', filters: ['device:mobile'] },
  { customerId: 'acme', streamId: 'acme:live-main', window: '1h', filters: ['!device:mobile', '!region:us-east'] },
  { customerId: 'globex', streamId: null, window: '24h', filters: [] },
  { customerId: 'globex', streamId: null, window: '1h', filters: ['region:nowhere'] },
  // Short windows: computed from the recent reports of the customers asked, batched apart.
  { customerId: 'acme', streamId: null, window: '15m', filters: ['device:mobile'] },
  { customerId: 'acme', streamId: 'acme:live-main', window: '5m', filters: [] },
  { customerId: 'globex', streamId: null, window: '5m', filters: ['!region:eu-west'] },
];

/** The independent filters of a question's filter strings. */
function independentFilters(filters: readonly string[]): IndependentFilters {
  const out: IndependentFilters = {};
  for (const [d, f] of parseFilters([...filters]).filters) out[d] = { keep: f.keep, drop: f.drop };
  return out;
}

const METRICS = ['totalSessions', 'totalBytesFallback', 'avgOffloadRatio', 'avgBufferHealth', 'rebufferRatio', 'startupTimeP95Ms', 'p2pConnectionSuccess'] as const;

describe('batched alert figures', () => {
  it('gives each question of one batch the figures of its own breakdown, and of independent SQL', async () => {
    const snap = t.api.deps.store.current()!;
    const asked = new Map(QUESTIONS.map((q, i) => [String(i), q]));
    const failures: Error[] = [];
    for (const customersPerQuery of [1, 100]) {
      const figures = await questionsFigures(t.api.deps.db, snap, asked, customersPerQuery, (err) => failures.push(err));
      expect(failures).toEqual([]);
      expect(figures.size).toBe(QUESTIONS.length);
      const ind = await t.independent();
      for (const [i, q] of QUESTIONS.entries()) {
        const got = figures.get(String(i))!;
        const [alone] = await breakdownRows(t.api.deps.db, snap, { customers: [q.customerId], streamId: q.streamId }, { window: q.window, by: null, filters: parseFilters([...q.filters]).filters });
        const [theirs] = await ind.breakdown(q.window, { by: null, streams: [q.streamId ?? `${q.customerId}:`], filters: independentFilters(q.filters) });
        for (const m of METRICS) {
          expect(got[m], `${m} of question ${i}`).toEqual((alone ?? NO_SESSIONS)[m]);
          if (theirs) expectSameFigure(got[m], theirs[m], `${m} of question ${i}`);
        }
        if (!theirs) expect(got.totalSessions, `question ${i} keeps no session`).toBe(0);
      }
      expect(figures.get('5')!.totalSessions).toBe(0);
      expect(figures.get('1')!.totalSessions).toBeGreaterThan(0);
    }
  });

  it('answers every shape of question in one batch: negated and several filters, null values, tenant-wide and one stream, every window, sessions kept by several questions', async () => {
    const snap = t.api.deps.store.current()!;
    const streams = [...snap.summaries.get('24h')!.keys()];
    const scopes: [string, string | null][] = [];
    for (const customerId of ['acme', 'globex']) {
      const own = streams.filter((s) => s.startsWith(`${customerId}:`)).sort();
      expect(own.length, `streams of ${customerId}`).toBeGreaterThan(1);
      scopes.push([customerId, null], [customerId, own[0]!], [customerId, own[1]!]);
    }
    const FILTERS: string[][] = [
      [],
      ['!device:mobile'],
      ['device:mobile', 'device:tv'],
      ['device:desktop', '!region:eu-west', 'cohort:p2p'],
      ['!device:mobile', '!device:tv', '!region:us-east'],
      ['region:eu-west', 'region:us-east', '!region:us-east'],
      ['signalingVersion:1.8.7', 'contentType:live'],
      ['!sdkVersion:', '!cohort:control'],
      ['device:'],
    ];
    const WINDOWS: Question['window'][] = ['5m', '15m', '1h', '24h'];
    const questions: Question[] = [];
    for (const window of WINDOWS) for (const [customerId, streamId] of scopes) for (const filters of FILTERS) questions.push({ customerId, streamId, window, filters });
    // The same questions again under other keys: every session is then kept by several questions of the batch.
    const asked = new Map<string, Question>([...questions.entries()].map(([i, q]) => [String(i), q]));
    for (const [i, q] of questions.entries()) if (i % 3 === 0) asked.set(`again ${i}`, { ...q, filters: [...q.filters].reverse() });
    const failures: Error[] = [];
    const figures = await questionsFigures(t.api.deps.db, snap, asked, 100, (err) => failures.push(err));
    expect(failures).toEqual([]);
    expect(figures.size).toBe(asked.size);
    const ind = await t.independent();
    let kept = 0;
    for (const [key, q] of asked) {
      const got = figures.get(key)!;
      const [alone] = await breakdownRows(t.api.deps.db, snap, { customers: [q.customerId], streamId: q.streamId }, { window: q.window, by: null, filters: parseFilters([...q.filters]).filters });
      const [theirs] = await ind.breakdown(q.window, { by: null, streams: [q.streamId ?? `${q.customerId}:`], filters: independentFilters(q.filters) });
      for (const m of METRICS) {
        expect(got[m], `${m} of ${key} (${JSON.stringify(q)})`).toEqual((alone ?? NO_SESSIONS)[m]);
        if (theirs) expectSameFigure(got[m], theirs[m], `${m} of ${key} (${JSON.stringify(q)})`);
      }
      if (!theirs) expect(got.totalSessions, `${key} keeps no session`).toBe(0);
      if (got.totalSessions > 0) kept++;
      if (key.startsWith('again ')) expect(got).toEqual(figures.get(key.slice('again '.length)));
    }
    // The shapes keep sessions (a test of nothing would pass too): all but the null keep, in most windows.
    expect(kept).toBeGreaterThan(asked.size / 2);
    for (const [i, q] of questions.entries()) if (q.filters[0] === 'device:') expect(figures.get(String(i))!.totalSessions).toBe(0);
  });

  it("writes a statement whose text does not grow with the questions (they are bound rows)", () => {
    const question = (i: number): BatchQuestion => ({
      customerId: `c${i % 7}`,
      streamId: i % 2 ? `c${i % 7}:s${i}` : null,
      window: i % 2 ? '1h' : '24h',
      filters: parseFilters(i % 3 ? [`device:d${i}`, `!region:r${i}`] : [`!device:d${i}`, `region:r${i}`, `region:x${i}`]).filters,
    });
    const few = batchSql('classes_table', Array.from({ length: 6 }, (_, i) => question(i)));
    const many = batchSql('classes_table', Array.from({ length: 600 }, (_, i) => question(i)));
    expect(many.sql).toBe(few.sql);
    expect(Object.keys(many.params).sort()).toEqual(Object.keys(few.params).sort());
  });
});
