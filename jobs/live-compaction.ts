// Compaction in the background of the embedded default (`start`): the compaction job (small landed
// files merged, the layers of layered states merged, covered files retired) in a loop of its own,
// beside the live rollups (live-rollups.ts), so that a run never waits for a large merge. A pass
// starts `gapMs` after the previous one ends; stopping waits for the pass in flight (each step of
// a compaction is crash-safe anyway: a pass cut short leaves what the next one finishes).
import type { JobDeps } from './deps.ts';
import { runCompaction, type CompactionResult } from './compaction/compact.ts';

export class LiveCompaction {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

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
    }, this.gapMs);
  }

  private async pass(): Promise<void> {
    try {
      this.onPass(await runCompaction(this.deps), null);
    } catch (err) {
      this.deps.log.error({ err }, 'background compaction failed; the next pass tries again');
      this.onPass(null, err);
    }
  }
}
