// The warehouse of the rebuild-after-deployment tests of the live loops (test/jobs/live-rebuild,
// rebuild-cadence): the three days before this hour, two customers of one stream each (5 to 7
// partitions by the hour of the day: the 71 hours span 3 or 4 dates, and not every customer has a
// session on each; 5 at 00:00–01:59 UTC), landed before the runs' asOf (now) and built by a first
// run; a deployment is then simulated by setting CODE_SALT (it salts the hash of the state code),
// which `close` restores.
import { openTestWarehouse, type TestWarehouse } from './warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { keepEnv } from './env.ts';

export const CODE_SALT = 'P2PTEL_TEST_STATE_CODE_SALT';
const HOUR = 3_600_000;

export interface DeployedWarehouse {
  wh: TestWarehouse;
  /** The partitions the first run built (each customer's dates). */
  partitions: number;
  /** The warehouse closed and CODE_SALT as it was before. */
  close(): Promise<void>;
}

export async function openDeployedWarehouse(settings: Record<string, string>): Promise<DeployedWarehouse> {
  const restoreEnv = keepEnv(CODE_SALT);
  const wh = await openTestWarehouse(settings);
  const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 72 * HOUR);
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 1, sessions: 40, start, hours: 71, seed: 3 });
  // Landed before the first run's asOf.
  await new Promise((r) => setTimeout(r, 2100));
  const first = await runPipeline(wh, { asOf: new Date() });
  return {
    wh,
    partitions: first.manifest.partitionStates!.rebuilt,
    close: async () => {
      restoreEnv();
      await wh.close();
    },
  };
}
