// The order in which stale partition states are rebuilt after a deployment (jobs/rollup/plan.ts
// staleInOrder): asOf's date first, then customer by customer, each customer's dates newest
// first, so that a step or a run's budget touches as few customers as it can (what a snapshot
// derives per customer from its states is made again once one of them changes).
import { describe, expect, it } from 'vitest';
import { staleInOrder } from '../../jobs/rollup/plan.ts';
import type { PartitionDecision } from '../../warehouse/states/index.ts';

describe('staleInOrder', () => {
  it("takes asOf's date first, then one customer's days newest first before the next customer's, and only stale ones", () => {
    const asOf = new Date('2026-11-20T10:00:00Z');
    const d = (customerId: string, date: string, reason: PartitionDecision['reason'] = 'stale') => ({ customerId, date, reason });
    const decisions = [
      d('b', '2026-11-18'),
      d('a', '2026-11-17'),
      d('b', '2026-11-20'),
      d('a', '2026-11-19'),
      d('c', '2026-11-19', 'new files landed'),
      d('a', '2026-11-20'),
      d('b', '2026-11-19'),
      d('c', '2026-11-18', null),
      d('a', '2026-11-18'),
    ];
    expect(staleInOrder(decisions, asOf).map((x) => `${x.customerId}/${x.date}`)).toEqual([
      'a/2026-11-20',
      'b/2026-11-20',
      'a/2026-11-19',
      'a/2026-11-18',
      'a/2026-11-17',
      'b/2026-11-19',
      'b/2026-11-18',
    ]);
  });
});
