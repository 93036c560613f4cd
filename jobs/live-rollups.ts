// Rolling up inline on a short cadence, for the embedded default (`start`): a run as soon as new
// reports land (a collector in the same process says so), at most one at a time (a landing during
// a run asks for one more right after it), and one at least every `idleMs` anyway, so that windows
// and activity move with the clock; compaction runs beside them (live-compaction.ts). After a
// deployment that changed a state's SQL, either the runs rebuild no stale state and the background
// rebuild (live-rebuild.ts) replaces them in steps taken between runs (`turn`), asking for a run
// when it has (`start`), or each run rebuilds a budget of them and the next run follows right
// after it (`staleInRuns`). With `landFirst`, each run first lands what the collector in the same
// process has acknowledged, so that a report waits for the run in flight and its own, not for a
// flush timer as well. Stopping waits for the run in flight: nothing is left half done.
import type { JobDeps } from './deps.ts';
import { runPipeline, type PipelineResult } from './pipeline.ts';

export interface LiveRollupPolicy {
  /** At least this long between the end of one run and the start of the next. */
  minGapMs: number;
  /** A run at least this often, new reports or not. */
  idleMs: number;
  /**
   * True (the default): each run rebuilds a budget of stale states (ROLLUP_REBUILD_BUDGET), and
   * runs follow one another while some are left. False: runs rebuild none (the background rebuild
   * does, and says when with `requested()`).
   */
  staleInRuns?: boolean;
  /**
   * Lands what the collector in the same process has acknowledged (`start`: Flusher.landNow),
   * awaited before each run takes its asOf, so that a run counts every report acknowledged before
   * it started instead of those the flush timer landed. What it lands asks for no further run:
   * this one counts it.
   */
  landFirst?: () => Promise<void>;
}

export interface LiveRun {
  /**
   * `rebuild`: the previous run still used stale states, or the background rebuild replaced some
   * (docs/warehouse-state.md, "After a deployment").
   */
  reason: 'landed' | 'idle' | 'rebuild';
  ms: number;
  result: PipelineResult | null;
  error: unknown;
}

/** One thing at a time: a run, or a step of the background rebuild (they share the process's DuckDB and its memory limit). */
class Turns {
  private tail: Promise<unknown> = Promise.resolve();

  take<T>(work: () => Promise<T>): Promise<T> {
    const mine = this.tail.then(work, work);
    this.tail = mine.catch(() => {});
    return mine;
  }
}

export class LiveRollups {
  private readonly turns = new Turns();
  private timer: NodeJS.Timeout | null = null;
  /** Why the timer is set. */
  private pending: LiveRun['reason'] | null = null;
  private running: Promise<void> | null = null;
  /** A run asked for during the run in flight, and why (reports landed outrank the rebuild). */
  private wanted: 'landed' | 'rebuild' | null = null;
  /** The last run published a snapshot that still used stale states. */
  private rebuilding = false;
  private stopped = false;
  /** The run in flight is landing the collector's reports (landFirst) and has not taken its asOf yet. */
  private landing = false;

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
    // Landed by the run's own landFirst (or beside it, before its asOf): that run counts them.
    if (this.landing) return;
    if (this.running) this.wanted = 'landed';
    else this.later('landed', 0);
  }

  /** The background rebuild replaced stale states: a run publishes them now, or right after the run in flight. */
  requested(): void {
    if (this.running) this.wanted ??= 'rebuild';
    else if (this.pending === null || this.pending === 'idle') this.later('rebuild', 0);
  }

  /**
   * Run `work` (a step of the background rebuild) between runs, never beside one: a run due
   * meanwhile waits for it (one step, about ROLLUP_REBUILD_SECONDS), and it waits for a run in flight.
   */
  turn<T>(work: () => Promise<T>): Promise<T> {
    return this.turns.take(work);
  }

  /** Whether a run is in flight or due at once (reports landed, a run asked for): the background rebuild then waits. */
  busy(): boolean {
    return this.running !== null || (this.timer !== null && this.pending !== 'idle');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private later(reason: LiveRun['reason'], ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.pending = reason;
    this.timer = setTimeout(() => this.kick(reason), ms);
  }

  private kick(reason: LiveRun['reason']): void {
    this.timer = null;
    this.pending = null;
    if (this.stopped || this.running) return;
    this.running = this.run(reason).finally(() => {
      this.running = null;
      const again = this.wanted;
      this.wanted = null;
      if (again || this.rebuilding) this.later(again ?? 'rebuild', this.policy.minGapMs);
      else this.later('idle', this.policy.idleMs);
    });
  }

  /** The policy's landFirst, if any: a failure there (logged by the flusher) does not stop the run. */
  private async landFirst(): Promise<void> {
    if (!this.policy.landFirst) return;
    this.landing = true;
    try {
      await this.policy.landFirst();
    } catch {
      // The flusher logs and retries its own failures; the run goes on with what has landed.
    } finally {
      this.landing = false;
    }
  }

  private async run(reason: LiveRun['reason']): Promise<void> {
    let started = performance.now();
    try {
      // Compaction runs beside the runs (live-compaction.ts), not before each of them.
      const staleInRuns = this.policy.staleInRuns !== false;
      // After a step of the background rebuild in progress, if any: `ms` is the run's own time.
      const result = await this.turns.take(async () => {
        await this.landFirst();
        started = performance.now();
        return runPipeline(this.deps, { asOf: new Date(), compact: false, rebuildStale: staleInRuns });
      });
      this.rebuilding = staleInRuns && result.published && (result.manifest.partitionStates?.stale ?? 0) > 0;
      this.onRun({ reason, ms: performance.now() - started, result, error: null });
    } catch (error) {
      // A failing run is not retried at once: the next comes when reports land, or at idle time.
      this.rebuilding = false;
      this.onRun({ reason, ms: performance.now() - started, result: null, error });
    }
  }
}
