// The `enqueue` command's work: add a rollup or report run now (named by its asOf: adding it twice
// runs it once; a run that failed is started again), and with --wait follow it to its end.
import { z } from 'zod';
import { runtime, withQueues } from '../runtime.ts';
import { progressBar } from '../progress.ts';
import { isoDate, positiveNumber } from '../options.ts';
import { EXIT, ExitError } from '../../lib/errors.ts';
import { assertAsOfNotAhead, describeAhead } from '../../lib/time.ts';
import type { AppConfig, SettingOverrides } from '../../lib/config.ts';
import type { EnqueueOutcome } from '../../jobs/queue/enqueue.ts';
import type { RunInfo } from '../../jobs/queue/runs.ts';
import { duration, int } from '../format.ts';

export const Flags = z.object({
  kind: z.enum(['rollup', 'reports'], { error: (issue) => `unknown run kind "${String(issue.input)}": rollup or reports` }),
  asOf: isoDate.optional(),
  wait: z.boolean().optional(),
  timeout: positiveNumber.optional(),
});

/** Nobody took the run for this long: say what is probably missing. */
const NO_WORKER_HINT_MS = 10_000;

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const asOf = flags.asOf ?? new Date(Math.floor(Date.now() / 1000) * 1000);
  assertAsOfNotAhead(asOf, rt.config.snapshots.asOfMaxSkewMs);
  const timeoutMs = flags.timeout === undefined ? undefined : flags.timeout * 1000;
  const out = (s: string) => process.stdout.write(`${s}\n`);

  const { enqueueRun, waitForRun } = await import('../../jobs/queue/enqueue.ts');
  const finished = await withQueues(rt, async (queues) => {
    const outcome = await enqueueRun(queues, rt.config.jobs, flags.kind, asOf);
    out(describeEnqueue(outcome));
    if (!flags.wait) return null;
    // Waiting rides out a Redis restart: say so, and go on once it is back.
    let lost = false;
    queues.client.on('reconnecting', () => {
      if (lost) return;
      lost = true;
      process.stderr.write('note: lost the connection to Redis; waiting for it to come back (the run goes on on the workers)\n');
    });
    queues.client.on('ready', () => {
      if (!lost) return;
      lost = false;
      process.stderr.write('note: reconnected to Redis\n');
    });
    const bar = progressBar(`${flags.kind} ${asOf.toISOString()}`);
    const started = Date.now();
    let hinted = false;
    try {
      return await waitForRun(queues, flags.kind, asOf, {
        pollMs: 250,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        onUpdate: (run) => {
          bar.update(run?.percent ?? 0, run ? `${run.state} ${run.progress}` : '');
          if (!hinted && run?.state === 'queued' && Date.now() - started > NO_WORKER_HINT_MS) {
            hinted = true;
            process.stderr.write(`note: no worker has taken the run yet; is \`p2ptel worker\` running with this Redis and queue prefix (${rt.config.redis.prefix})?\n`);
          }
        },
      });
    } finally {
      bar.stop();
    }
  }, flags.wait ? 'service' : 'command');
  if (!finished) return;
  if (finished.state === 'failed') {
    process.stderr.write(`error: ${flags.kind} run ${finished.asOf} failed: ${finished.error ?? 'unknown reason'}\n`);
    process.exitCode = EXIT.failed;
    return;
  }
  out(describeOutcome(finished));
  if (finished.kind === 'rollup' && finished.published === false) await failIfBlockedByFuture(rt.config);
}

export function describeEnqueue(o: EnqueueOutcome): string {
  const run = `${o.kind} run ${o.asOf.toISOString()}`;
  switch (o.status) {
    case 'added':
      return `enqueued ${run} (job ${o.jobId})`;
    case 'retried':
      return `${run} had failed (${o.before?.error ?? 'unknown reason'}); enqueued again (job ${o.jobId})`;
    case 'exists':
      return `${run} is already ${o.before?.state === 'completed' ? 'done' : `enqueued (${o.before?.state ?? 'unknown'})`}: not added again`;
  }
}

export function describeOutcome(r: RunInfo): string {
  const took = r.durationMs === null ? '' : ` in ${duration(r.durationMs)}`;
  if (r.kind === 'reports') return `reports run ${r.asOf} completed${took}: ${r.note ?? 'done'}`;
  const figures = [r.reports === null ? null : `${int(r.reports)} reports`, r.streams === null ? null : `${int(r.streams)} streams`]
    .filter(Boolean)
    .join(', ');
  const snap = r.snapshot ? `snapshot ${r.snapshot} ${r.published ? 'published' : 'not published (a later asOf is current)'}` : 'completed';
  return `rollup run ${r.asOf} completed${took}: ${snap}${figures ? `, ${figures}` : ''}`;
}

/** A rollup not published because CURRENT is ahead of the clock: exit 3, as `pipeline` does. */
async function failIfBlockedByFuture(config: AppConfig): Promise<void> {
  const { readCurrent } = await import('../../warehouse/snapshots/index.ts');
  const { warehouseLayout } = await import('../../warehouse/layout.ts');
  const current = await readCurrent(warehouseLayout(config.warehouseDir)).catch(() => null);
  const ahead = current ? Date.parse(current.asOf) - Date.now() : 0;
  if (current && ahead > config.snapshots.asOfMaxSkewMs) {
    throw new ExitError(
      `the run was not published: the current snapshot ${current.snapshot} has asOf ${current.asOf}, ${describeAhead(ahead)} ahead of the clock; ` +
        'go back with `p2ptel snapshots use <id>` or `p2ptel pipeline --replace-current`',
      EXIT.blockedByFutureSnapshot,
    );
  }
  process.stderr.write('warning: the run was not published: a snapshot with a later asOf is current\n');
}
