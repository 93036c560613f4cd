// What a worker does with each kind of job: validate the payload, call the same job functions as
// `cli pipeline` (plan, partition, publish), report progress, and return a small result.
// Everything about figures lives in those functions; this is only the BullMQ adapter.
import fs from 'node:fs/promises';
import { assertAsOfNotAhead } from '../../lib/time.ts';
import { RunAlreadyRunningError, runLocked } from '../../warehouse/snapshots/index.ts';
import { UnrecoverableError, type Job } from 'bullmq';
import type { AppConfig } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import type { JobDeps } from '../deps.ts';
import { planRollup } from '../rollup/plan.ts';
import { rollupPartition, withReused } from '../rollup/partition.ts';
import { BuildGoneError, publishRollupOnce, type PublishOnceResult } from '../rollup/publish-once.ts';
import { runReports } from '../pilot-reports/run.ts';
import { buildDir, keepBuildAlive } from '../../warehouse/snapshots/index.ts';
import { leaseStates } from '../../warehouse/states/index.ts';
import type { Queues } from './client.ts';
import { compactedFilesCounter, compactionsCounter, partitionsCounter } from './metrics.ts';
import { runCompaction } from '../compaction/compact.ts';
import { rollupFlow } from './flow.ts';
import { rollupJobId, rollupRunId } from './names.ts';
import { scheduledAsOf } from './fire-time.ts';
import { tick } from './ticks.ts';
import type { Gate } from './tick-gate.ts';
import type { WorkerAlerts } from '../../alerts/worker-alerts.ts';
import {
  CompactPayload,
  PartitionPayload,
  PartitionResult,
  PlanPayload,
  PublishPayload,
  ReportsPayload,
  payloadOf,
  resultOf,
  type CompactJobResult,
  type PlanResult,
  type Progress,
  type PublishResult,
  type ReportsResult,
} from './payloads.ts';

export interface WorkerContext {
  deps: JobDeps;
  queues: Queues;
  config: AppConfig;
  log: Logger;
  /** host#pid, recorded on every job this process takes (BullMQ's processedBy). */
  workerName: string;
  /** Alert rules evaluated on each snapshot this process publishes (alerts/worker-alerts.ts). */
  alerts?: WorkerAlerts | null;
}

/** A handler gets the job and a logger that names it; what it returns is the job's result. */
export type JobHandler = (job: Job, log: Logger) => Promise<unknown>;

export interface Processors {
  tick: JobHandler;
  plan: JobHandler;
  partition: JobHandler;
  publish: JobHandler;
  reports: JobHandler;
  compact: JobHandler;
}

const progress = (job: Job, p: Progress) => job.updateProgress(p);

export function defaultProcessors(ctx: WorkerContext): Processors {
  return {
    tick: (job, log) => tick(gateOf(ctx), job, log),
    plan: (job, log) => plan(ctx, job, log),
    partition: (job, log) => partition(ctx, job, log),
    publish: (job, log) => publish(ctx, job, log),
    reports: (job, log) => reports(ctx, job, log),
    compact: (job, log) => compact(ctx, job, log),
  };
}

/** What the schedule gate needs of a worker (tick-gate.ts). */
export const gateOf = (ctx: WorkerContext): Gate => ({
  queues: ctx.queues,
  retry: ctx.config.jobs,
  workerName: ctx.workerName,
  idle: { layout: ctx.deps.layout, refreshMs: ctx.config.schedules.idleRefreshMs },
});

/** The job functions' dependencies, with the job's logger. */
const depsFor = (ctx: WorkerContext, log: Logger): JobDeps => ({ ...ctx.deps, log });

/** A rollup run's plan: its flow of partition jobs and publish job, added once. */
async function plan(ctx: WorkerContext, job: Job, log: Logger): Promise<PlanResult> {
  const asOf = new Date(payloadOf(PlanPayload, job).asOf);
  await refuseUnrunnable(ctx, asOf);
  const rollupId = rollupJobId(asOf);
  // Only this job (one id per asOf) adds the run's flow, so a check then an add cannot race
  // with another plan of the same run; a retry after a crash finds the flow already there.
  const existing = await ctx.queues.rollup.getJob(rollupId);
  if (existing) {
    log.info({ rollupJobId: rollupId }, 'the run already has its flow');
    const customers = resultOf(PublishPayload, existing.data)?.customers.length ?? 0;
    return { runId: rollupRunId(asOf), asOf: asOf.toISOString(), rollupJobId: rollupId, created: false, customers };
  }
  return addRunFlow(ctx, job, log, asOf);
}

/** Refuse for good a run from the future (it would stay current and discard every later one) or one already running inline. */
async function refuseUnrunnable(ctx: WorkerContext, asOf: Date): Promise<void> {
  try {
    assertAsOfNotAhead(asOf, ctx.config.snapshots.asOfMaxSkewMs);
  } catch (err) {
    throw new UnrecoverableError((err as Error).message);
  }
  // An inline run of the same asOf is computing it: never twice.
  if (await runLocked(ctx.deps.layout, asOf, ctx.config.snapshots.lockStaleMs)) {
    throw new UnrecoverableError(new RunAlreadyRunningError(asOf).message);
  }
}

async function addRunFlow(ctx: WorkerContext, job: Job, log: Logger, asOf: Date): Promise<PlanResult> {
  const runId = rollupRunId(asOf);
  const rollupId = rollupJobId(asOf);
  await progress(job, { percent: 0, step: 'planning' });
  const startedAt = Date.now();
  // ownerPid null: the build folder belongs to the run, not to this process (other workers fill it).
  const planned = await planRollup(depsFor(ctx, log), { runId, asOf, ownerPid: null });
  // The states the run reuses are leased until it publishes (warehouse/states/state-retention.ts).
  await leaseStates(ctx.deps.layout, runId, planned.reused.map((m) => m.stateId));
  await ctx.queues.flows.add(rollupFlow(planned, startedAt, ctx.config.jobs));
  log.info({ rollupJobId: rollupId, customers: planned.customers.length, jobs: planned.batches.length }, 'run planned');
  const rebuilt = planned.decisions.filter((d) => d.action === 'rebuild').length;
  await progress(job, {
    percent: 100,
    step: `${planned.batches.length} jobs queued (${rebuilt} partitions to rebuild, ${planned.decisions.length - rebuilt} reused)`,
  });
  return { runId, asOf: asOf.toISOString(), rollupJobId: rollupId, created: true, customers: planned.customers.length };
}

/** A batch of partition states of a run. */
async function partition(ctx: WorkerContext, job: Job, log: Logger): Promise<PartitionResult> {
  const data = payloadOf(PartitionPayload, job);
  await assertBuildFolder(ctx, data.runId);
  const customers = [...new Set(data.partitions.map((p) => p.customerId))].join(',');
  await progress(job, { percent: 0, step: `building ${data.partitions.length} partition(s) of ${customers}` });
  const r = await keepingBuildAlive(ctx, data.runId, log, async () => {
    const built = await rollupPartition(depsFor(ctx, log), { runId: data.runId, asOf: new Date(data.asOf), partitions: data.partitions });
    // The states the publish step will read, leased until it has (warehouse/states/state-retention.ts).
    await leaseStates(ctx.deps.layout, data.runId, [...built.states, ...built.reused].map((m) => m.stateId));
    return built;
  });
  await progress(job, { percent: 100, step: `built ${data.partitions.length} partition(s) of ${customers}` });
  return {
    customerId: customers,
    partitions: r.states.length,
    reports: r.states.reduce((a, m) => a + m.reports, 0),
    streams: r.states.reduce((a, m) => Math.max(a, m.streams), 0),
    files: r.states.reduce((a, m) => a + m.files.length, 0),
    quarantined: r.states.reduce((a, m) => a + m.quarantined.length, 0),
    durationMs: r.durationMs,
    worker: ctx.workerName,
    reused: r.reused.map(({ customerId, date, stateId }) => ({ customerId, date, stateId })),
  };
}

/**
 * Without its build folder the run cannot publish whatever a job writes (it was removed as debris
 * after a very long stall): fail the run at once rather than write into nowhere.
 */
async function assertBuildFolder(ctx: WorkerContext, runId: string): Promise<void> {
  const dir = buildDir(ctx.deps.layout, runId);
  if (!(await fs.stat(dir).then((s) => s.isDirectory()).catch(() => false))) {
    throw new UnrecoverableError(`the build folder of run ${runId} is gone; enqueue the run again`);
  }
}

/** `work`, while the run's build folder is kept from being judged debris by another run's plan. */
async function keepingBuildAlive<T>(ctx: WorkerContext, runId: string, log: Logger, work: () => Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => {
    keepBuildAlive(ctx.deps.layout, runId).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'cannot refresh the build folder'));
  }, Math.max(1000, Math.floor(ctx.deps.config.snapshots.debrisGraceMs / 4)));
  try {
    await keepBuildAlive(ctx.deps.layout, runId);
    return await work();
  } finally {
    clearInterval(keepAlive);
  }
}

/** A run's last step: its snapshot combined and published, once. */
async function publish(ctx: WorkerContext, job: Job, log: Logger): Promise<PublishResult> {
  const planned = payloadOf(PublishPayload, job);
  // Partitions a job found built meanwhile by another run are reuses of that state.
  const data = { ...planned, decisions: withReused(planned.decisions, await reusedByChildren(job)) };
  await progress(job, { percent: 0, step: 'publishing' });
  const r = await publishOnce(ctx, data, log);
  if (r.published && r.manifest) await evaluateAlerts(ctx, r.manifest.snapshot, log);
  await progress(job, { percent: 100, step: r.published ? 'published' : 'discarded (a later asOf is current)' });
  const m = r.manifest;
  // Counted once per run: a retried publish that finds its snapshot made adds nothing.
  if (m?.partitionStates && !r.alreadyPublished) {
    partitionsCounter.labels('reused').inc(m.partitionStates.reused);
    partitionsCounter.labels('rebuilt').inc(m.partitionStates.rebuilt);
  }
  return {
    runId: data.runId,
    asOf: data.asOf,
    snapshot: m?.snapshot ?? null,
    published: r.published,
    alreadyPublished: r.alreadyPublished,
    reports: m?.rows.reports ?? null,
    streams: m?.rows.streams ?? null,
    files: m?.inputs.files ?? null,
    quarantined: m?.quarantined.length ?? null,
    partitionsReused: m?.partitionStates?.reused ?? null,
    partitionsRebuilt: m?.partitionStates?.rebuilt ?? null,
  };
}

/**
 * The alert rules on the snapshot just published, inside the publish job (a crash before its
 * events are enqueued retries the job, which evaluates again without effect and enqueues them).
 * A failure is logged, not the run's: the snapshot is published, the next one is evaluated.
 */
async function evaluateAlerts(ctx: WorkerContext, snapshot: string, log: Logger): Promise<void> {
  if (!ctx.alerts) return;
  try {
    await ctx.alerts.afterPublish(snapshot, log);
  } catch (err) {
    log.error({ snapshot, err: (err as Error).message }, 'alert evaluation failed; the next snapshot is evaluated');
  }
}

async function reusedByChildren(job: Job): Promise<NonNullable<PartitionResult['reused']>> {
  const values = Object.values(await job.getChildrenValues());
  return values.flatMap((v) => resultOf(PartitionResult, v)?.reused ?? []);
}

async function publishOnce(ctx: WorkerContext, data: PublishPayload, log: Logger): Promise<PublishOnceResult> {
  try {
    return await publishRollupOnce(depsFor(ctx, log), {
      runId: data.runId,
      asOf: new Date(data.asOf),
      customers: data.customers,
      misplaced: data.misplaced,
      decisions: data.decisions,
      startedAt: data.startedAt,
    });
  } catch (err) {
    // Retrying cannot bring a vanished build folder back.
    if (err instanceof BuildGoneError) throw new UnrecoverableError(err.message);
    throw err;
  }
}

/** The pilot reports of every stream, on a snapshot. */
async function reports(ctx: WorkerContext, job: Job, log: Logger): Promise<ReportsResult> {
  const { asOf } = payloadOf(ReportsPayload, job);
  await progress(job, { percent: 0, step: 'running' });
  const r = await runReports(depsFor(ctx, log), { asOf: new Date(asOf) }, (percent, step) => progress(job, { percent, step }));
  // The others are published; the run still fails, so that its summary is seen (and retried).
  if (r.failed.length > 0) throw new Error(r.message);
  await progress(job, { percent: 100, step: 'done' });
  // The result kept in Redis: the counts, not every customer's timings.
  return { asOf: r.asOf, snapshot: r.snapshot, customers: r.customers, rendered: r.rendered, unchanged: r.unchanged, reports: r.reports, message: r.message };
}

/**
 * The compaction job of the warehouse (jobs/compaction/compact.ts). One compaction at a time runs
 * in a warehouse (its lock): a job that finds it held is skipped, counted and said as such. A
 * partition that fails fails the job (its reason in `runs`); the next fire time tries again.
 */
async function compact(ctx: WorkerContext, job: Job, log: Logger): Promise<CompactJobResult> {
  payloadOf(CompactPayload, job);
  const firedAt = scheduledAsOf(job).toISOString();
  await progress(job, { percent: 0, step: 'compacting' });
  let r;
  try {
    r = await runCompaction(depsFor(ctx, log));
  } catch (err) {
    compactionsCounter.labels('failed').inc();
    throw err;
  }
  const files = r.compacted.reduce((a, c) => a + c.files, 0);
  compactedFilesCounter.inc(files);
  if (r.failed > 0) {
    compactionsCounter.labels('failed').inc();
    throw new Error(`the compaction of ${r.failed} partition(s) failed (see the worker's log; their files stay as they are); ${r.compacted.length} compacted`);
  }
  compactionsCounter.labels(r.busy ? 'skipped' : 'done').inc();
  if (r.busy) log.info('compaction skipped: another compaction holds the warehouse lock');
  await progress(job, { percent: 100, step: r.busy ? 'skipped' : 'done' });
  return {
    firedAt,
    outcome: r.busy ? 'skipped' : 'done',
    partitions: r.compacted.length,
    files,
    bytesIn: r.compacted.reduce((a, c) => a + c.bytesIn, 0),
    bytesOut: r.compacted.reduce((a, c) => a + c.bytesOut, 0),
    retired: r.retired.files,
    durationMs: r.durationMs,
    worker: ctx.workerName,
  };
}
