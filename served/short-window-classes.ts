// The short window classes (warehouse/reads/short-windows.ts) of the streams and customers asked,
// made on first use and kept per snapshot: a table per (snapshot, customer, stream or every
// stream) in the Db's small reads instance, read by every later question of that snapshot (any
// filter, any `by`, 5m or 15m, the route's and the alert rules'). A customer's table serves the
// questions of one of its streams too. Tables of a snapshot older than the newest one asked for
// are dropped once no question reads them, and at most MAX_TABLES are kept: short windows cost
// nothing to a snapshot that nobody asks them of.
import type { Db } from '../warehouse/duckdb/index.ts';
import { createShortWindowClasses } from '../warehouse/reads/index.ts';
import type { ServedSnapshot } from './snapshot-store.ts';

/** Tables kept at most (the oldest asked first out). */
export const MAX_TABLES = 256;

interface Entry {
  key: string;
  asOfMs: number;
  /** The table, or null: the customer has no partition in the snapshot. */
  made: Promise<string | null>;
  users: number;
  evicted: boolean;
}

/** Sessions that read the tables: plain ones (the small reads instance, where the tables are). */
const SESSION = { bounded: true } as const;

export class ShortWindowClasses {
  private readonly entries = new Map<string, Entry>();
  private next = 0;
  private newestAsOfMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Db,
    private readonly maxTables = MAX_TABLES,
  ) {}

  /** Tables kept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * `fn` over the short window classes of each scope (a customer's one stream, or every stream of
   * theirs: null) whose customer has a partition, made now if no question of this snapshot made
   * them; the tables stay while `fn` runs. `fn` reads them in a plain session of its own (not
   * `releaseAfter`: the tables are in the small reads instance).
   */
  async using<T>(snap: ServedSnapshot, scopes: readonly { customerId: string; streamId: string | null }[], fn: (tables: string[]) => Promise<T>): Promise<T> {
    const used = scopes.map((x) => this.acquire(snap, x.customerId, x.streamId));
    try {
      const tables = await Promise.all(used.map((e) => e.made));
      return await fn(tables.filter((t): t is string => t !== null));
    } finally {
      for (const e of used) this.release(e);
    }
  }

  private acquire(snap: ServedSnapshot, customerId: string, streamId: string | null): Entry {
    const whole = this.entries.get(keyOf(snap, customerId, null));
    const key = keyOf(snap, customerId, streamId);
    let e = whole ?? this.entries.get(key);
    if (e) {
      // Most recently used last.
      this.entries.delete(e.key);
      this.entries.set(e.key, e);
    } else {
      e = { key, asOfMs: snap.asOfMs, made: this.make(snap, customerId, streamId), users: 0, evicted: false };
      this.entries.set(key, e);
      const failed = e;
      e.made.catch(() => {
        if (this.entries.get(key) === failed) this.entries.delete(key);
      });
      this.evictOld(snap.asOfMs);
    }
    e.users += 1;
    return e;
  }

  private release(e: Entry): void {
    e.users -= 1;
    if (e.evicted && e.users === 0) this.drop(e);
  }

  /** Older snapshots' tables out, then the least recently used beyond the bound. */
  private evictOld(asOfMs: number): void {
    this.newestAsOfMs = Math.max(this.newestAsOfMs, asOfMs);
    for (const e of [...this.entries.values()]) if (e.asOfMs < this.newestAsOfMs) this.evict(e);
    for (const e of this.entries.values()) {
      if (this.entries.size <= this.maxTables) break;
      this.evict(e);
    }
  }

  private evict(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    e.evicted = true;
    if (e.users === 0) this.drop(e);
  }

  private drop(e: Entry): void {
    void e.made
      .then((table) => (table === null ? undefined : this.db.withSession((s) => s.run(`DROP TABLE IF EXISTS ${table}`))))
      .catch(() => {});
  }

  private async make(snap: ServedSnapshot, customerId: string, streamId: string | null): Promise<string | null> {
    const inputs = snap.recentInputs(customerId);
    if (!inputs) return null;
    // A name made here (a counter), never from input.
    const table = `short_window_classes_${++this.next}`;
    // In a session of its own, without the asking request's signal: a table others wait for is
    // not cancelled with the first request.
    await this.db.withSession((s) => createShortWindowClasses(s, inputs, streamId, new Date(snap.asOfMs), table), SESSION);
    return table;
  }
}

function keyOf(snap: ServedSnapshot, customerId: string, streamId: string | null): string {
  return `${snap.id}\0${customerId}\0${streamId ?? ''}`;
}

const perDb = new WeakMap<Db, ShortWindowClasses>();

/** The short window classes of `db` (its tables live in it): one keeper per Db. */
export function shortWindowClasses(db: Db): ShortWindowClasses {
  let c = perDb.get(db);
  if (!c) perDb.set(db, (c = new ShortWindowClasses(db)));
  return c;
}
