// Generated data sets shared by test suites.
import { generateReports } from '../../warehouse/sample/generate.ts';
import type { TestWarehouse } from './warehouse.ts';

const HOUR = 3_600_000;

/**
 * Forty days of sparse history, then three busy hours up to `recentEnd`: every window (1h, 24h,
 * 7d, 30d, all) holds something different.
 */
export async function generateHistory(target: TestWarehouse, customers: string[], seed: number, recentEnd: Date, streams = 3): Promise<void> {
  await generateReports(target.db, target.layout, {
    customers,
    streams,
    sessions: 150,
    start: new Date(recentEnd.getTime() - 40 * 24 * HOUR),
    hours: 40 * 24 - 3,
    seed,
  });
  await generateReports(target.db, target.layout, {
    customers,
    streams,
    sessions: 120,
    start: new Date(recentEnd.getTime() - 3 * HOUR),
    hours: 3,
    seed: seed + 1,
  });
}
