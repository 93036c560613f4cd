// The signature of a class unit (class-units.ts): the same for every asOf that gives each of the
// unit's whole hour pieces the same window class and the same reading, another for any asOf (or
// cut hours) that does not. And a layer's unit: the hours its reports lie in (hand-worked).
import { describe, expect, it } from 'vitest';
import { dayStartUs, SETTLED_BLOCK_DAYS, settledBlockOf, unitSettledForTheDay, unitSignature } from '../../warehouse/states/combine-plan.ts';
import { layerClassUnit } from '../../warehouse/states/window-pieces.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import type { LayerMeta, StateMeta } from '../../warehouse/states/state-store.ts';

const us = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const TODAY = us('2026-11-20T00:00:00Z');
const DAY = 86_400_000_000n;
const at = (iso: string, cutHours: bigint[] = []) => ({ asOfUs: us(iso), cutHours });

describe('unitSignature', () => {
  it('of the days before asOf: stays while the edges move inside their hours', () => {
    const a = unitSignature(at('2026-11-20T11:00:00.001Z'), null, TODAY);
    expect(unitSignature(at('2026-11-20T11:37:13Z'), null, TODAY)).toBe(a);
    expect(unitSignature(at('2026-11-20T11:59:59.998Z'), null, TODAY)).toBe(a);
    // the 1-hour edge lies in asOf's day: it leaves every piece before out of its window
    expect(a.split(',')[0]).toBe('after');
  });

  it('changes when an edge reaches another hour or the first instant of its own', () => {
    const inside = unitSignature(at('2026-11-20T11:37:13Z'), null, TODAY);
    const next = unitSignature(at('2026-11-20T12:37:13Z'), null, TODAY);
    const atStart = unitSignature(at('2026-11-20T11:00:00Z'), null, TODAY);
    expect(new Set([inside, next, atStart]).size).toBe(3);
  });

  it("of an hour file of asOf's day: the 1-hour edge and asOf itself place its pieces", () => {
    const a = unitSignature(at('2026-11-20T11:37:13Z'), TODAY, TODAY + DAY);
    expect(unitSignature(at('2026-11-20T11:02:00Z'), TODAY, TODAY + DAY)).toBe(a);
    expect(unitSignature(at('2026-11-20T12:02:00Z'), TODAY, TODAY + DAY)).not.toBe(a);
    // the 24-hour edge lies before the day: every piece of it is in that window
    expect(a.split(',')[1]).toBe('before');
  });

  it('changes with the hours cut in its span, and only those', () => {
    const asOf = '2026-11-20T11:37:13Z';
    const base = unitSignature(at(asOf), TODAY, TODAY + DAY);
    expect(unitSignature(at(asOf, [us('2026-11-20T11:00:00Z')]), TODAY, TODAY + DAY)).not.toBe(base);
    expect(unitSignature(at(asOf, [us('2026-11-13T11:00:00Z')]), TODAY, TODAY + DAY)).toBe(base);
  });
});

describe('layerClassUnit', () => {
  const layout = warehouseLayout('/tmp/p2ptel-layer-class-unit');
  const state = (layers: LayerMeta[]): StateMeta => ({
    formatVersion: 1, stateId: 's1', stateVersion: 'v', codeVersion: 'c', customerId: 'acme', date: '2026-11-20', runId: 'r', builtAt: '',
    files: [], presentColumns: [], quarantined: [], rowsRead: 0, reports: 0, duplicatesDropped: 0, streams: 0, maxTs: null, hourRows: 0, seriesRows: 0, buildMs: 0, layers,
  });
  const layer = (minTs: string | null | undefined, maxTs: string | null): LayerMeta => ({ layerId: 'l1', builtAt: '', reports: 1, ...(minTs === undefined ? {} : { minTs }), maxTs, hourRows: 1 });
  const span = (l: LayerMeta) => {
    const u = layerClassUnit(layout, state([l]), l);
    return [u.fromUs, u.toUs];
  };

  it("spans the hours from the layer's earliest report to its latest", () => {
    expect(span(layer('2026-11-20T12:05:00.123456Z', '2026-11-20T13:30:00.000000Z'))).toEqual([us('2026-11-20T12:00:00Z'), us('2026-11-20T14:00:00Z')]);
    // A report on the hour's first instant: that hour.
    expect(span(layer('2026-11-20T12:00:00.000000Z', '2026-11-20T12:00:00.000000Z'))).toEqual([us('2026-11-20T12:00:00Z'), us('2026-11-20T13:00:00Z')]);
  });

  it("falls back to the day's edges where a ts is missing, unreadable or of another day", () => {
    expect(span(layer(undefined, '2026-11-20T13:30:00Z'))).toEqual([TODAY, us('2026-11-20T14:00:00Z')]);
    expect(span(layer('not a time', null))).toEqual([TODAY, TODAY + DAY]);
    expect(span(layer('2026-11-19T23:59:59Z', '2026-11-21T00:00:00Z'))).toEqual([TODAY, TODAY + DAY]);
  });
});

describe('unitSettledForTheDay', () => {
  // asOf 2026-11-20: the 24h edge lies in 11-19, the 7d edge in 11-13, the 30d edge in 10-21.
  const plan = (iso: string, cutHours: bigint[] = []) => ({ asOfUs: us(iso), asOfDate: iso.slice(0, 10), cutHours });
  const day = (date: string) => [us(`${date}T00:00:00Z`), us(`${date}T00:00:00Z`) + DAY] as const;
  const days = (from: string, to: string) => [us(`${from}T00:00:00Z`), us(`${to}T00:00:00Z`) + DAY] as const;

  it('holds for the runs of days between the edges, at every hour of the day', () => {
    for (const iso of ['2026-11-20T00:00:00Z', '2026-11-20T00:30:00Z', '2026-11-20T11:37:13Z', '2026-11-20T23:59:59.999Z']) {
      expect(unitSettledForTheDay(plan(iso), ...days('2026-11-14', '2026-11-18')), iso).toBe(true);
      expect(unitSettledForTheDay(plan(iso), ...days('2026-10-22', '2026-11-12')), iso).toBe(true);
      // before the 30d edge, unbounded below
      expect(unitSettledForTheDay(plan(iso), null, us('2026-10-21T00:00:00Z')), iso).toBe(true);
    }
  });

  it('does not hold for a day an edge falls in, a span of asOf\'s date, or a span that holds a cut hour', () => {
    const asOf = '2026-11-20T11:37:13Z';
    expect(unitSettledForTheDay(plan(asOf), ...day('2026-11-19'))).toBe(false); // 24h edge
    expect(unitSettledForTheDay(plan(asOf), ...day('2026-11-13'))).toBe(false); // 7d edge
    expect(unitSettledForTheDay(plan(asOf), ...day('2026-10-21'))).toBe(false); // 30d edge
    expect(unitSettledForTheDay(plan(asOf), null, us('2026-10-22T00:00:00Z'))).toBe(false); // holds the 30d edge
    expect(unitSettledForTheDay(plan(asOf), TODAY, TODAY + 3_600_000_000n)).toBe(false); // asOf's date
    // at midnight the 1h edge lies in the day before: 11-19, the 24h edge's day anyway
    expect(unitSettledForTheDay(plan('2026-11-20T00:20:00Z'), ...day('2026-11-19'))).toBe(false);
    // a cut hour inside a span otherwise free of edges (as when a state of that day holds reports after asOf)
    const cut = us('2026-11-16T05:00:00Z');
    expect(unitSettledForTheDay(plan(asOf, [cut]), ...days('2026-11-14', '2026-11-18'))).toBe(false);
  });
});

describe('settledBlockOf', () => {
  const block = (date: string) => settledBlockOf(dayStartUs(date));
  it('groups UTC days in blocks of four from the epoch, the same from one asOf to the next', () => {
    expect(SETTLED_BLOCK_DAYS).toBe(4);
    // 2026-11-03 is day 20,760 since the epoch: 20,760 / 4 = 5,190, a block's first day.
    expect(block('2026-11-03')).toBe(5190n);
    expect(block('2026-11-06')).toBe(5190n);
    expect(block('2026-11-02')).toBe(5189n);
    expect(block('2026-11-07')).toBe(5191n);
    expect(block('1970-01-01')).toBe(0n);
    expect(block('1969-12-31')).toBe(-1n); // before the epoch: floored, not truncated
    expect(block('1969-12-28')).toBe(-1n);
    expect(block('1969-12-27')).toBe(-2n);
  });
});
