// Alerts in `start`: each snapshot the API swaps in is evaluated right after its publication, on
// the very ServedSnapshot the API serves, then its events are put in the outbox. One evaluation at
// a time; publications meanwhile coalesce into one more (the latest snapshot is what counts).
import type { Logger } from '../lib/log.ts';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { SnapshotStore } from '../served/snapshot-store.ts';
import type { Deliveries } from './webhooks/delivery-queue.ts';
import { evaluateSnapshot, type Evaluation } from './evaluate.ts';
import { enqueueAllEvents } from './notify.ts';

export class LiveAlerts {
  private running: Promise<void> | null = null;
  private again = false;
  private lastSnapshot: string | null = null;

  constructor(
    private readonly api: { db: Db; layout: WarehouseLayout; store: SnapshotStore; outbox: Deliveries },
    private readonly log: Logger,
    private readonly onEvaluated: (e: Evaluation) => void = () => {},
  ) {}

  /** A snapshot was published: evaluate it (and whatever is published meanwhile). */
  published(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Wait for the evaluation in flight, if any. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.once();
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'alert evaluation failed; the next snapshot tries again');
      }
    } while (this.again);
  }

  private async once(): Promise<void> {
    await this.api.store.refresh();
    const snap = this.api.store.current();
    if (snap && snap.id !== this.lastSnapshot) {
      const e = await evaluateSnapshot({ db: this.api.db, layout: this.api.layout, log: this.log }, snap);
      this.lastSnapshot = snap.id;
      this.onEvaluated(e);
    }
    await enqueueAllEvents(this.api.layout, this.api.outbox);
  }
}
