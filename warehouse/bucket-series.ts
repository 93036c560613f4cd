// The bucketed series (bucket_series.sql) read back as typed rows, per stream, for whatever
// `reports` holds: the API's on-demand sizes and the pilot reports use it.
import { sqlFile, toNumber, type DbSession } from './duckdb.ts';

/** One non-empty bucket of a stream's series (start in ms since the epoch). */
export interface BucketRow {
  startMs: number;
  sessions: number;
  bytesOffloaded: number;
  bytesFallback: number;
  offloadRatio: number;
  avgPeerCount: number;
  avgBufferHealth: number;
  rebufferEvents: number;
}

export function toBucketRow(b: Record<string, unknown>): BucketRow {
  return {
    startMs: toNumber(b['startMs']),
    sessions: toNumber(b['sessions']),
    bytesOffloaded: toNumber(b['bytesOffloaded']),
    bytesFallback: toNumber(b['bytesFallback']),
    offloadRatio: Number(b['offloadRatio']),
    avgPeerCount: Number(b['avgPeerCount']),
    avgBufferHealth: Number(b['avgBufferHealth']),
    rebufferEvents: toNumber(b['rebufferEvents']),
  };
}

/** Every stream's non-empty buckets of `bucketSeconds` over `reports`, in time order. */
export async function querySeries(s: DbSession, bucketSeconds: number): Promise<Map<string, BucketRow[]>> {
  const rows = await s.all<Record<string, unknown>>(
    `SELECT streamId, epoch_ms(bucketStart) AS startMs, sessions, bytesOffloaded, bytesFallback, offloadRatio,
            avgPeerCount, avgBufferHealth, rebufferEvents
     FROM (${sqlFile('bucket_series')}) ORDER BY streamId, bucketStart`,
    { bucket_seconds: bucketSeconds },
  );
  const out = new Map<string, BucketRow[]>();
  for (const r of rows) {
    const id = String(r['streamId']);
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push(toBucketRow(r));
  }
  return out;
}
