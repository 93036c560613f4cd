// The runs a layered build cuts its touched minutes into (layered-state.ts, touchedMinuteChunks):
// consecutive minutes while their minute pieces fit the bound, a minute over it alone, hand-worked.
import { describe, expect, it } from 'vitest';
import { touchedMinuteChunks } from '../../warehouse/states/layered-state.ts';

const M = 60_000_000n;
const blocks = (...rows: [minute: number, n: number][]) => rows.map(([m, n]) => ({ block_us: BigInt(m) * M, n: BigInt(n) }));
const minutes = (chunks: { lo: bigint; hi: bigint }[]) => chunks.map((c) => [Number(c.lo / M), Number(c.hi / M)]);

describe('touchedMinuteChunks', () => {
  it('keeps consecutive minutes together while their pieces fit, and a minute over the bound alone', () => {
    // 3 + 4 = 7 ≤ 10; + 5 = 12 > 10: a new run; 5 + 12 > 10: the 12 alone; then 1 + 2 + 3.
    expect(minutes(touchedMinuteChunks(blocks([0, 3], [1, 4], [5, 5], [6, 12], [7, 1], [9, 2], [10, 3]), 10))).toEqual([
      [0, 1],
      [5, 5],
      [6, 6],
      [7, 10],
    ]);
  });

  it('takes every minute in one run when all fit, minutes with no piece too', () => {
    expect(minutes(touchedMinuteChunks(blocks([3, 0], [4, 2], [8, 0]), 400_000))).toEqual([[3, 8]]);
  });

  it('gives one empty run when no minute is touched', () => {
    const [only, ...rest] = touchedMinuteChunks([], 10);
    expect(rest).toEqual([]);
    expect(only!.hi < only!.lo).toBe(true);
  });
});
