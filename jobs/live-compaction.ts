// Compaction in the background of the embedded default (`start`): the compaction job (small landed
// files merged, the layers of layered states merged, covered files retired) in a loop of its own,
// beside the live rollups (live-rollups.ts), so that a run never waits for a large merge. A pass
// starts `gapMs` after the previous one ends; stopping waits for the pass in flight (each step of
// a compaction is crash-safe anyway: a pass cut short leaves what the next one finishes). A pass
// that fails, or in which a partition failed, waits twice as long before the next (nextGapMs):
// the passes share the process's DuckDB with the live runs, and a merge that does not fit in its
// memory limit (a heavy today under `start`'s 256MB), tried again every few seconds, made the
// runs beside it fail too.
import type { JobDeps } from './deps.ts';
import { runCompaction, type CompactionResult } from './compaction/compact.ts';

/** The longest wait after failed passes. */
export const MAX_FAILED_GAP_MS = 10 * 60_000;

/** The wait before the next pass: `gapMs` after a pass that did its work, doubled for each failure in a row (at most MAX_FAILED_GAP_MS). */
export function nextGapMs(gapMs: number, failuresInARow: number): number {
  return failuresInARow === 0 ? gapMs : Math.min(MAX_FAILED_GAP_MS, gapMs * 2 ** failuresInARow);
}

export class LiveCompaction {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly deps: JobDeps,
    private readonly gapMs: number,
    private readonly onPass: (r: CompactionResult | null, error: unknown) => void = () => {},
  ) {}

  start(): void {
    this.later();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private later(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass().finally(() => {
        this.running = null;
        this.later();
      });
    }, this.nextMs());
  }

  private nextMs(): number {
    return nextGapMs(this.gapMs, this.failures);
  }

  private async pass(): Promise<void> {
    try {
      const r = await runCompaction(this.deps);
      // A partition whose compaction failed (logged by the job; the others went on) counts as a failed pass.
      this.failures = r.failed > 0 ? this.failures + 1 : 0;
      if (r.failed > 0) this.deps.log.warn({ failed: r.failed, failuresInARow: this.failures, nextInMs: this.nextMs() }, `background compaction: ${r.failed} partition(s) failed; the next pass in ${Math.round(this.nextMs() / 1000)} s`);
      this.onPass(r, null);
    } catch (err) {
      this.failures++;
      this.deps.log.error({ err, failuresInARow: this.failures, nextInMs: this.nextMs() }, `background compaction failed; the next pass tries again in ${Math.round(this.nextMs() / 1000)} s`);
      this.onPass(null, err);
    }
  }
}
