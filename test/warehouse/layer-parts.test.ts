// The parts layered-state.ts cuts large groupings into, hand-worked: the runs of touched minutes
// of a layered build (touchedMinuteChunks: consecutive minutes while their minute pieces fit the
// bound, a minute over it alone), and the ordered ranges of a layer merge's series pieces
// (orderedRanges: every value in exactly one, the parts in the column's order).
import { describe, expect, it } from 'vitest';
import { orderedRanges, touchedMinuteChunks } from '../../warehouse/states/layered-state.ts';

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

describe('orderedRanges', () => {
  it('cuts at each bound, every value in exactly one range, in order', () => {
    const ranges = orderedRanges('x', ['10', '20']);
    expect(ranges).toEqual(['x <= 10', 'x > 10 AND x <= 20', 'x > 20']);
    // Each value of a span around the bounds passes exactly one range, and the ranges take them in order.
    const passes = (range: string, x: number) =>
      range.split(' AND ').every((c) => {
        const [, op, b] = /^x (<=|>) (\d+)$/.exec(c)!;
        return op === '<=' ? x <= Number(b) : x > Number(b);
      });
    const owner = (x: number) => ranges.flatMap((r, i) => (passes(r, x) ? [i] : []));
    for (let x = -5; x <= 30; x++) expect(owner(x)).toEqual([x <= 10 ? 0 : x <= 20 ? 1 : 2]);
  });

  it('is one range of everything with no bound', () => {
    expect(orderedRanges('x', [])).toEqual(['true']);
  });
});
