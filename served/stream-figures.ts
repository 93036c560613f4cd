// A stream's unfiltered figures in a window, as GET /telemetry/metrics/:streamId serves them and
// alert rules watch them: its summary's fields (zeros without a report in the window) and its
// quality figures, from the served snapshot's memory. One function for both: no second computation.
import { NO_SESSIONS } from '../warehouse/reads/index.ts';
import type { WindowName } from '../warehouse/figures/index.ts';
import type { QualityJson, ServedSnapshot, SummaryJson } from './snapshot-store.ts';

export const METRIC_FIELDS = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth'] as const;

export type MetricFigures = { streamId: string } & Pick<SummaryJson, (typeof METRIC_FIELDS)[number]>;

export function metricsOf(streamId: string, s: SummaryJson | undefined): MetricFigures {
  const out = { streamId } as MetricFigures;
  for (const f of METRIC_FIELDS) out[f] = s ? s[f] : 0;
  return out;
}

/** The quality figures of a stream's unfiltered metrics (none in a snapshot from before breakdowns). */
export function qualityOf(snap: ServedSnapshot, window: WindowName, streamId: string): QualityJson | Record<string, never> {
  if (!snap.quality) return {};
  const { rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess } = snap.quality.get(window)!.get(streamId) ?? NO_SESSIONS;
  return { rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess };
}

/** The body of a stream's unfiltered metrics: figures, window, asOf and quality figures. */
export function streamMetricsBody(snap: ServedSnapshot, streamId: string, window: WindowName) {
  return {
    ...metricsOf(streamId, snap.summaries.get(window)!.get(streamId)),
    window,
    asOf: snap.manifest.asOf,
    ...qualityOf(snap, window, streamId),
  };
}
