// The expected answer of GET /telemetry/timeseries from the independent SQL: every aligned bucket
// of the window (docs/api.md), the independent figures where the stream reported, zeros
// elsewhere.
import { norm, type Independent } from './independent.ts';
import { WINDOWS, type WindowName } from '../../warehouse/figures/windows.ts';

export async function expectedSeries(ind: Independent, streamId: string, window: WindowName, size: number): Promise<Record<string, unknown>> {
  const rows = await ind.series(size, streamId);
  const step = size * 1000;
  const asOf = ind.asOf.getTime();
  const seconds = WINDOWS.find((w) => w.name === window)!.seconds;
  const to = Math.floor(asOf / step) * step;
  const from = seconds === null ? Number(norm(rows[0]!['start'])) : Math.floor((asOf - seconds * 1000) / step) * step;
  const byStart = new Map(rows.map((r) => [Number(norm(r['start'])), r]));
  const buckets = [];
  for (let s = from; s <= to; s += step) {
    const r = byStart.get(s);
    buckets.push({
      start: new Date(s).toISOString(),
      sessions: r ? norm(r['sessions']) : 0,
      bytesOffloaded: r ? norm(r['bytesOffloaded']) : 0,
      bytesFallback: r ? norm(r['bytesFallback']) : 0,
      offloadRatio: r ? r['offloadRatio'] : 0,
      avgPeerCount: r ? r['avgPeerCount'] : 0,
      avgBufferHealth: r ? r['avgBufferHealth'] : 0,
      rebufferEvents: r ? norm(r['rebufferEvents']) : 0,
    });
  }
  return { streamId, window, bucketSeconds: size, from: new Date(from).toISOString(), to: new Date(to).toISOString(), buckets };
}
