// Random small data sets for breakdowns: every session dimension (nulls included), sessions that
// change device or region mid-way, sessions across every window edge, startup times on seq = 0
// only, duplicates across files, and a late file held back to land after a first run.
import { writeReportsParquet, landingPath, type HandReport } from './reports.ts';
import { seededRandom } from './random.ts';
import type { TestWarehouse } from './warehouse.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** Where sessions start, before asOf: past every window edge, and across each. */
const STARTS: readonly [number, number][] = [
  [-40 * DAY, -31 * DAY],
  [-30 * DAY - 3 * HOUR, -30 * DAY + HOUR],
  [-8 * DAY, -6 * DAY],
  [-7 * DAY - 2 * HOUR, -7 * DAY + HOUR],
  [-26 * HOUR, -22 * HOUR],
  [-2 * HOUR, -30 * MIN],
  [-10 * MIN, 5 * MIN],
];

const DIMENSIONS: Record<string, readonly (string | null)[]> = {
  cohort: ['p2p', 'control', null],
  contentType: ['live', 'vod', null],
  device: ['desktop', 'mobile', 'tv', null],
  region: ['eu-west', 'us-east', 'ap-south', null],
  sdkVersion: ['3.2.1', '3.3.0', null],
  signalingVersion: ['1.9.2', '2.0.0', null],
};
export const DIMENSION_VALUES = DIMENSIONS;

type Report = Omit<HandReport, 'cohort' | 'contentType' | 'device' | 'region' | 'sdkVersion' | 'signalingVersion'> & Record<string, unknown>;

export interface BreakdownData {
  /** Landed now. */
  files: Map<string, Report[]>;
  /** Landed after a first run: late reports of old dates, and copies of landed ones. */
  late: Map<string, Report[]>;
}

export function breakdownData(seed: number, customers: readonly string[], asOf: Date, sessionsPerStream = 10): BreakdownData {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const reports: Report[] = [];
  for (const c of customers) {
    for (let st = 0; st < 2; st++) {
      const streamId = `${c}:live-${st}`;
      for (let k = 0; k < sessionsPerStream; k++) {
        const sessionId = `${c}-${st}-s${k}`;
        const [lo, hi] = pick(STARTS);
        let ts = asOf.getTime() + lo + Math.floor(r() * (hi - lo));
        const dims: Record<string, string | null> = Object.fromEntries(Object.entries(DIMENSIONS).map(([d, xs]) => [d, pick(xs)]));
        const n = int(1, 7);
        const change = r() < 0.35 ? int(1, Math.max(1, n - 1)) : -1;
        for (let seq = 0; seq < n; seq++) {
          if (seq === change) {
            dims['device'] = pick(DIMENSIONS['device']!);
            if (r() < 0.5) dims['region'] = pick(DIMENSIONS['region']!);
          }
          const attempts = int(0, 4);
          reports.push({
            reportId: `${sessionId}-r${seq}`,
            sessionId,
            streamId,
            ts: new Date(ts).toISOString(),
            seq,
            final: seq === n - 1 && r() < 0.7,
            ...dims,
            bytesOffloaded: int(0, 2_000_000),
            bytesFallback: int(0, 2_000_000),
            peerCount: r() < 0.2 ? null : int(0, 12),
            bufferHealth: r() < 0.2 ? null : Math.round(r() * 30_000) / 1000,
            stallCount: int(0, 3),
            stallMs: int(0, 4000),
            watchMs: int(0, 30_000),
            startupMs: seq === 0 && r() < 0.7 ? int(80, 4000) : null,
            p2pConnAttempts: attempts,
            p2pConnSuccesses: int(0, attempts),
          });
          // Gaps of minutes to hours: a session crosses hours, days and window edges.
          ts += pick([30_000, 90_000, 7 * MIN, 50 * MIN, 3 * HOUR, 20 * HOUR]);
        }
      }
    }
  }
  const files = new Map<string, Report[]>();
  const late = new Map<string, Report[]>();
  const add = (to: Map<string, Report[]>, key: string, x: Report) => to.set(key, [...(to.get(key) ?? []), x]);
  for (const x of reports) {
    const customer = x.streamId.split(':')[0]!;
    const date = x.ts.slice(0, 10);
    const partition = `${customer}/${date}`;
    const isLate = r() < 0.1;
    add(isLate ? late : files, `${partition}/${isLate ? 'late' : pick(['a', 'b'])}.parquet`, x);
    // A copy of the report in another file (the SDK retried): counted once.
    if (r() < 0.12) add(r() < 0.5 ? late : files, `${partition}/copies.parquet`, x);
  }
  return { files, late };
}

/** Lands the files of a data set into the warehouse's landing area. */
export async function landBreakdownFiles(wh: TestWarehouse, files: Map<string, Report[]>, suffix = ''): Promise<void> {
  for (const [key, rows] of files) {
    const [customer, date, name] = key.split('/') as [string, string, string];
    await writeReportsParquet(wh.db, landingPath(wh.root, customer, date, name.replace('.parquet', `${suffix}.parquet`)), rows as HandReport[]);
  }
}
