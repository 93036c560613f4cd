// The signature of a class unit (class-units.ts): the same for every asOf that gives each of the
// unit's whole hour pieces the same window class and the same reading, another for any asOf (or
// cut hours) that does not.
import { describe, expect, it } from 'vitest';
import { unitSignature } from '../../warehouse/combine-plan.ts';

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
