// The BullMQ flow of one rollup run: a parent that combines the partition states and publishes,
// with one child per batch of (customer, date) partitions whose state needs rebuilding. A reused
// partition costs no job. BullMQ moves the parent to work only once every child has succeeded.
import type { FlowJob } from 'bullmq';
import type { AppConfig } from '../../lib/config.ts';
import type { RollupPlan } from '../rollup/plan.ts';
import { JOBS, QUEUES, partitionJobId, rollupJobId } from './names.ts';
import { partitionJobOptions, runJobOptions } from './job-options.ts';
import type { PartitionPayload, PublishPayload } from './payloads.ts';

export function rollupFlow(plan: RollupPlan, startedAt: number, retry: AppConfig['jobs']): FlowJob {
  const asOf = plan.asOf.toISOString();
  const parent: PublishPayload = {
    runId: plan.runId,
    asOf,
    customers: plan.customers,
    misplaced: plan.misplaced,
    decisions: plan.decisions,
    startedAt,
  };
  return {
    name: JOBS.publish,
    queueName: QUEUES.rollup,
    data: parent,
    opts: runJobOptions(retry, rollupJobId(plan.asOf)),
    children: plan.batches.map(({ partitions }, i) => {
      const data: PartitionPayload = { runId: plan.runId, asOf, partitions };
      return {
        name: JOBS.partition,
        queueName: QUEUES.partitions,
        data,
        opts: partitionJobOptions(retry, partitionJobId(plan.asOf, `${partitions[0]!.customerId}-${i}`)),
      };
    }),
  };
}
