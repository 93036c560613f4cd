// start's background compaction after failed passes (jobs/live-compaction.ts): the wait before the
// next pass doubles with each failure in a row, up to a cap, and is the usual gap again after a pass
// that did its work. Hand-worked values of the rule; no timing is measured here.
import { describe, expect, it } from 'vitest';
import { MAX_FAILED_GAP_MS, nextGapMs } from '../../jobs/live-compaction.ts';

describe('the wait before the next background compaction pass', () => {
  it('is the gap after a pass that worked, doubles for each failure in a row, and stops at the cap', () => {
    expect(nextGapMs(5_000, 0)).toBe(5_000);
    expect(nextGapMs(5_000, 1)).toBe(10_000);
    expect(nextGapMs(5_000, 2)).toBe(20_000);
    expect(nextGapMs(5_000, 6)).toBe(320_000);
    expect(nextGapMs(5_000, 7)).toBe(MAX_FAILED_GAP_MS);
    expect(nextGapMs(5_000, 60)).toBe(MAX_FAILED_GAP_MS);
    expect(MAX_FAILED_GAP_MS).toBe(600_000);
  });
});
