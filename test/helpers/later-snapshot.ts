// A published snapshot seen again under a later asOf (and another id): the same files and figures,
// as a new publication whose values did not move would be. For evaluating alert rules on a
// sequence of snapshots without publishing each (tests, bench/alerts.ts).
import { ServedSnapshot } from '../../served/snapshot-store.ts';

export function laterSnapshot(snap: ServedSnapshot, laterMs: number, id = `${snap.id}+${laterMs}`): ServedSnapshot {
  const manifest = { ...snap.manifest, asOf: new Date(snap.asOfMs + laterMs).toISOString() };
  return new ServedSnapshot(id, snap.dir, manifest, snap.summaries, snap.platform, snap.customerRows, snap.responses, snap.quality);
}
