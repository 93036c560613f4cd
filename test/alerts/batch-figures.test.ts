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
});
