// The class signature of older days' hour pieces (older-classes.ts): the same for every asOf that
// gives each of their whole hour pieces the same window class, another for any asOf that does not.
import { describe, expect, it } from 'vitest';
import { olderClassesSignature } from '../../warehouse/older-classes.ts';

const us = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const RECENT_FROM = us('2026-11-18T00:00:00Z');

describe('olderClassesSignature', () => {
  it('stays while the 7- and 30-day edges move inside their hours', () => {
    const a = olderClassesSignature(us('2026-11-20T11:00:00.001Z'), RECENT_FROM);
    expect(olderClassesSignature(us('2026-11-20T11:37:13Z'), RECENT_FROM)).toBe(a);
    expect(olderClassesSignature(us('2026-11-20T11:59:59.998Z'), RECENT_FROM)).toBe(a);
  });

  it('changes when an edge reaches another hour, or the first or last instant of its own', () => {
    const inside = olderClassesSignature(us('2026-11-20T11:37:13Z'), RECENT_FROM);
    const next = olderClassesSignature(us('2026-11-20T12:37:13Z'), RECENT_FROM);
    const atStart = olderClassesSignature(us('2026-11-20T11:00:00Z'), RECENT_FROM);
    const atLast = olderClassesSignature(us('2026-11-20T11:59:59.999Z') + 999n, RECENT_FROM);
    expect(new Set([inside, next, atStart, atLast]).size).toBe(4);
  });

  it('ignores the edges that lie in the recent days (1h, 24h)', () => {
    const sig = olderClassesSignature(us('2026-11-20T11:37:13Z'), RECENT_FROM).split(',');
    expect(sig.slice(0, 2)).toEqual(['after', 'after']);
    expect(sig.slice(2).every((x) => x !== 'after')).toBe(true);
  });
});
