// One job of a rollup run: rebuild the states of a batch of one customer's (customer, date)
// partitions from their landed files. Idempotent: a retry builds fresh states (the newest state
// of this run wins; the others are pruned later), never touching a published snapshot.
import { discoverLanding } from '../../warehouse/landing.ts';
import { buildPartitionStates } from '../../warehouse/partition-state.ts';
import type { StateMeta } from '../../warehouse/state-store.ts';
import type { JobDeps } from '../deps.ts';

export interface BatchResult {
  customerId: string;
  dates: string[];
  states: StateMeta[];
  durationMs: number;
}

export async function rollupPartition(
  deps: JobDeps,
  input: { runId: string; asOf: Date; customerId: string; dates: string[] },
): Promise<BatchResult> {
  const started = Date.now();
  const { db, layout } = deps;
  const log = deps.log.child({ runId: input.runId, customerId: input.customerId });
  const wanted = new Set(input.dates);
  // The files as they are now: a file that landed since the plan is read too (the state records
  // exactly what it read).
  const landed = (await discoverLanding(layout)).files.filter((f) => f.customerId === input.customerId && wanted.has(f.date));
  const states = await db.withSession((s) =>
    buildPartitionStates({ s, layout, customerId: input.customerId, runId: input.runId, log }, input.dates, landed),
  );
  const durationMs = Date.now() - started;
  log.info(
    {
      dates: input.dates.length,
      reports: states.reduce((a, m) => a + m.reports, 0),
      files: states.reduce((a, m) => a + m.files.length, 0),
      ms: durationMs,
    },
    'partition states built',
  );
  return { customerId: input.customerId, dates: input.dates, states, durationMs };
}
