// The worker's metrics: each job's duration and outcome by queue and job name, BullMQ's queue
// counts (waiting, active, failed, delayed) read from Redis when scraped, for rollup runs,
// partitions reused or rebuilt (counted by the run once the incremental warehouse reports them),
// the schedules' fire times: started, coalesced, idle or missed, schedules reinstalled after Redis
// lost them, and compaction jobs: done or skipped.
import client from 'prom-client';
import { registry } from '../../lib/metrics.ts';
import type { Queues } from './client.ts';

const jobSeconds = new client.Histogram({
  name: 'p2ptel_job_duration_seconds',
  help: 'Jobs run by this worker, by queue, job name and outcome (done, retry: failed and will be retried, failed: failed for good)',
  labelNames: ['queue', 'job', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
  registers: [registry],
});

export type JobOutcome = 'done' | 'retry' | 'failed';

export function observeJob(queue: string, job: string, outcome: JobOutcome, ms: number): void {
  jobSeconds.labels(queue, job, outcome).observe(ms / 1000);
}

export const partitionsCounter = new client.Counter({
  name: 'p2ptel_rollup_partitions_total',
  help: 'Customer-day partitions of rollup runs, reused from the previous run or rebuilt',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const ticksCounter = new client.Counter({
  name: 'p2ptel_schedule_ticks_total',
  help: 'Fire times of the schedules, by schedule and outcome: started (its run), coalesced (a run was in flight: the latest such tick starts when it ends), idle (nothing landed since a snapshot younger than ROLLUP_IDLE_SECONDS: no run), missed (passed with no tick: no worker took it in time)',
  labelNames: ['schedule', 'outcome'] as const,
  registers: [registry],
});

export const schedulesReinstalledCounter = new client.Counter({
  name: 'p2ptel_schedules_reinstalled_total',
  help: 'Times this worker found job schedulers missing in Redis (it lost its data) and installed them again from the warehouse (control/schedule.json)',
  registers: [registry],
});

export const compactionsCounter = new client.Counter({
  name: 'p2ptel_compactions_total',
  help: 'Compaction jobs of small landed files, by outcome: done (compacted what was due, maybe nothing), skipped (another compaction held the warehouse lock), failed',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const compactedFilesCounter = new client.Counter({
  name: 'p2ptel_compacted_files_total',
  help: 'Small landed files merged by compaction jobs',
  registers: [registry],
});

const STATES = ['waiting', 'active', 'failed', 'delayed'] as const;
let queues: Queues | null = null;

new client.Gauge({
  name: 'p2ptel_queue_jobs',
  help: "Jobs in each BullMQ queue by state, as Redis holds them when scraped",
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    if (!queues) return;
    for (const q of [queues.rollup, queues.partitions, queues.reports, queues.compaction]) {
      const counts = await q.getJobCounts(...STATES);
      for (const state of STATES) this.set({ queue: q.name, state }, counts[state] ?? 0);
    }
  },
});

/** Let the queue gauge read these queues (the worker process's). */
export function bindQueueMetrics(q: Queues | null): void {
  queues = q;
}
