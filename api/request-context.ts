// The API's part of the request frame (lib/http/frame.ts): the snapshot a request reads, captured
// once when it starts (a swap during the request changes nothing it sees), and the API's reading of
// errors: a snapshot that cannot be read, DuckDB out of memory.
import type { Context } from 'koa';
import type { Logger } from '../lib/log.ts';
import { requestFrame } from '../lib/http/frame.ts';
import type { ServedSnapshot, SnapshotStore } from '../served/snapshot-store.ts';
import { outOfMemoryAsBusy, problems } from '../served/problems.ts';

/** The snapshot this request reads (captured once, when it started), or null when none is loaded. */
export function currentSnapshot(ctx: Context): ServedSnapshot | null {
  return (ctx.state['snapshot'] as ServedSnapshot | null | undefined) ?? null;
}

/** The snapshot this request reads; 503 when none is loaded yet. */
export function snapshotOf(ctx: Context): ServedSnapshot {
  const snap = currentSnapshot(ctx);
  if (!snap) throw problems.snapshotUnavailable();
  return snap;
}

/** What the frame needs of the snapshot store: the snapshot to serve, and a word on failures. */
export type FrameSnapshots = Pick<SnapshotStore, 'current' | 'explain'>;

/** The API's request frame: the shared frame, with the snapshot each request reads. */
export function apiRequestFrame(log: Logger, store: FrameSnapshots) {
  return requestFrame(log, {
    start: (ctx) => {
      ctx.state['snapshot'] = store.current();
    },
    explain: (err, ctx) => outOfMemoryAsBusy(store.explain(err), ctx, log),
  });
}
