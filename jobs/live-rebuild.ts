// The rebuild after a deployment in the background of the embedded default (`start`): a lane of
// its own beside the live rollups (live-rollups.ts, whose runs then rebuild no stale state), so
// that a run's duration holds no rebuild work (docs/warehouse-state.md, "After a deployment").
// A pass lists the stale partitions (rollup/rebuild-stale.ts) and rebuilds them in steps of about
// `stepMs` each (as many partitions as the previous step's time per partition says fit, one at
// least, and no more than a run's budget: `maxPartitions`, `maxReports`, which bound a step's
// memory in the DuckDB the runs share), each step started when no live run is in flight or due (`busy`), or once it has waited
// `stepMs` for such a moment (so that it converges however busy the runs are: under runs that
// never pause, it works half the time at most). A step is taken between runs, never beside one
// (`turn`: a run due meanwhile waits for the step, about `stepMs`; two DuckDB jobs at once, with
// compaction's merges beside them, exceeded `start`'s 256MB limit under load); it asks for a run (`requested`) after every
// `stepMs` of the pass and at its end, and that run's snapshot uses the rebuilt states. A pass
// starts when a published snapshot still used stale states (`wake`). Stopping waits for the step
// in flight; a process killed mid-build leaves debris, never a half-read state.
import type { JobDeps } from './deps.ts';
import { rebuildStalePartitions, stalePartitions } from './rollup/rebuild-stale.ts';
import { PARTITIONS_PER_BATCH } from './rollup/plan.ts';

export interface LiveRebuildPolicy {
  /** ROLLUP_REBUILD_SECONDS: a step's target duration, the longest wait for a quiet moment before one, and between two requests for a run. */
  stepMs: number;
  /** ROLLUP_REBUILD_BUDGET, ROLLUP_REBUILD_BUDGET_REPORTS: a step's partitions and their reports at most (one partition at least). */
  maxPartitions: number;
  maxReports: number;
}

/** What the lane needs of the live rollups. */
export interface LiveLoop {
  busy(): boolean;
  requested(): void;
  /** `work` between runs, never beside one (they share the DuckDB and its memory limit). */
  turn<T>(work: () => Promise<T>): Promise<T>;
}

export interface RebuildPass {
  /** Stale partitions found at the pass's start, rebuilt by it, and its duration (ms). */
  found: number;
  rebuilt: number;
  ms: number;
  error: unknown;
}

/** How often a waiting partition looks whether the live runs are quiet. */
const POLL_MS = 50;

export class LiveRebuild {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private sleeping: { timer: NodeJS.Timeout; wake: () => void } | null = null;

  constructor(
    private readonly deps: JobDeps,
    private readonly loop: LiveLoop,
    private readonly policy: LiveRebuildPolicy,
    private readonly onPass: (pass: RebuildPass) => void = () => {},
  ) {}

  /** A snapshot still used stale states: a pass now, or another one after the pass in flight. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        // Not at once: a pass that found nothing to do (or failed) is not repeated in a loop.
        void this.sleep(this.policy.stepMs).then(() => this.wake());
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.wake();
    }
    await this.running;
  }

  private async pass(): Promise<void> {
    const started = performance.now();
    let found = 0;
    let rebuilt = 0;
    let lastAsked = started;
    try {
      const stale = await stalePartitions(this.deps, new Date());
      found = stale.length;
      let msPerPartition: number | null = null;
      for (let i = 0; i < stale.length && !this.stopped; ) {
        await this.quietMoment();
        if (this.stopped) break;
        const fit = msPerPartition === null ? 1 : Math.floor(this.policy.stepMs / Math.max(1, msPerPartition));
        const most = Math.max(1, Math.min(PARTITIONS_PER_BATCH, this.policy.maxPartitions, fit));
        const step = [stale[i]!];
        let reports = stale[i]!.reports;
        while (step.length < most && i + step.length < stale.length && reports + stale[i + step.length]!.reports <= this.policy.maxReports) {
          reports += stale[i + step.length]!.reports;
          step.push(stale[i + step.length]!);
        }
        i += step.length;
        const r = await this.loop.turn(() => rebuildStalePartitions(this.deps, step, new Date()));
        msPerPartition = r.ms / step.length;
        rebuilt += r.states.length;
        if (performance.now() - lastAsked >= this.policy.stepMs) {
          lastAsked = performance.now();
          this.loop.requested();
        }
      }
      if (rebuilt > 0) this.loop.requested();
      this.onPass({ found, rebuilt, ms: performance.now() - started, error: null });
    } catch (error) {
      // What was rebuilt stays rebuilt; the next snapshot with stale states wakes the lane again.
      if (rebuilt > 0) this.loop.requested();
      this.deps.log.error({ err: error }, 'background rebuild of stale states failed; the next snapshot with stale states starts it again');
      this.onPass({ found, rebuilt, ms: performance.now() - started, error });
    }
  }

  /** Until no live run is in flight or due, `stepMs` at most. */
  private async quietMoment(): Promise<void> {
    const deadline = performance.now() + this.policy.stepMs;
    while (!this.stopped && this.loop.busy() && performance.now() < deadline) await this.sleep(POLL_MS);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleeping = null;
        resolve();
      };
      this.sleeping = { timer: setTimeout(wake, ms), wake };
    });
  }
}
