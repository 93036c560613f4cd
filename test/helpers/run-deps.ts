// What the kill tests' run fixtures (test/fixtures/pipeline-run.ts, rebuild-stale-run.ts) share: their
// arguments (WAREHOUSE AS_OF), the job deps over that warehouse at one DuckDB thread, and, with
// HOLD_TMP_MS set, every folder named .tmp-… held that long before it is renamed into place, so
// that a test polling for a half-built state sees it, however fast the run is on the machine.
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { loadConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { openJobDeps, type JobDeps } from '../../jobs/deps.ts';

/** The fixture's job deps and asOf, from its arguments; the .tmp- renames held when HOLD_TMP_MS asks. */
export async function openRunDeps(): Promise<{ deps: JobDeps & { close(): Promise<void> }; asOf: Date }> {
  const holdMs = Number(process.env['HOLD_TMP_MS'] ?? 0);
  if (holdMs > 0) {
    const rename = fsp.rename;
    fsp.rename = async (from, to) => {
      if (String(from).includes('/.tmp-')) await new Promise((r) => setTimeout(r, holdMs));
      return rename(from, to);
    };
    syncBuiltinESMExports();
  }
  const [warehouseDir, asOfIso] = process.argv.slice(2);
  const config = loadConfig({ overrides: { WAREHOUSE_DIR: warehouseDir }, env: { DUCKDB_THREADS: '1' } });
  return { deps: await openJobDeps(config, silentLogger), asOf: new Date(asOfIso!) };
}
