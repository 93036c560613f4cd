// Rolling up inline on a short cadence, for the embedded default (`start`): a run as soon as new
// reports land (a collector in the same process says so), at most one at a time (a landing during
// a run asks for one more right after it), and one at least every `idleMs` anyway, so that windows
// and activity move with the clock (or right after the previous one while a rebuild after a
// deployment is under way: each run rebuilds a few stale states); compaction runs beside them (live-compaction.ts). Stopping waits for the run in flight: nothing is left half done.
import type { JobDeps } from './deps.ts';
import { runPipeline, type PipelineResult } from './pipeline.ts';

export interface LiveRollupPolicy {
  /** At least this long between the end of one run and the start of the next. */
  minGapMs: number;
  /** A run at least this often, new reports or not. */
  idleMs: number;
}

export interface LiveRun {
  /** `rebuild`: the previous run still used stale states (docs/warehouse-state.md, "After a deployment"). */
  reason: 'landed' | 'idle' | 'rebuild';
  ms: number;
  result: PipelineResult | null;
  error: unknown;
}

export class LiveRollups {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private wanted = false;
  /** The last run published a snapshot that still used stale states. */
  private rebuilding = false;
  private stopped = false;

  constructor(
    private readonly deps: JobDeps,
    private readonly policy: LiveRollupPolicy,
    private readonly onRun: (run: LiveRun) => void,
  ) {}

  start(): void {
    this.later('idle', this.policy.idleMs);
  }

  /** New reports landed: roll up now, or right after the run in flight. */
  landed(): void {
    if (this.running) this.wanted = true;
    else this.later('landed', 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private later(reason: LiveRun['reason'], ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(reason), ms);
  }

  private kick(reason: LiveRun['reason']): void {
    this.timer = null;
    if (this.stopped || this.running) return;
    this.running = this.run(reason).finally(() => {
      this.running = null;
      const again = this.wanted;
      this.wanted = false;
      if (again || this.rebuilding) this.later(again ? 'landed' : 'rebuild', this.policy.minGapMs);
      else this.later('idle', this.policy.idleMs);
    });
  }

  private async run(reason: LiveRun['reason']): Promise<void> {
    const started = performance.now();
    try {
      // Compaction runs beside the runs (live-compaction.ts), not before each of them.
      const result = await runPipeline(this.deps, { asOf: new Date(), compact: false });
      this.rebuilding = result.published && (result.manifest.partitionStates?.stale ?? 0) > 0;
      this.onRun({ reason, ms: performance.now() - started, result, error: null });
    } catch (error) {
      // A failing run is not retried at once: the next comes when reports land, or at idle time.
      this.rebuilding = false;
      this.onRun({ reason, ms: performance.now() - started, result: null, error });
    }
  }
}
