// npm run bench:api -- [--duration 10] [--connections 20] [--runs 5] [--log-level info] [--profile DIR]
// Load on GET /telemetry/metrics/:streamId and GET /telemetry/streams?detail=1 from autocannon in
// this process, against the real API (cli serve, in its own process) and, in the same run, a bare
// node:http server answering the identical bytes (bench/bare-server.ts) and a minimal Koa app doing
// the same (bench/koa-floor-server.ts). Prints req/s and p99 of each and the ratios.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { addTenant, findTenant } from '../control/tenants.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { writeResult } from './report.ts';
import { cpuProfileFlags, startChild, stopChild } from './servers.ts';
import { compareHotRoutes } from './hot-routes.ts';

const opts = new Command()
  .option('--duration <s>', 'seconds of load per measurement', '10')
  .option('--connections <n>', 'concurrent connections', '20')
  .option('--runs <k>', 'rounds per route (each measures the three servers; medians and spread are reported)', '5')
  .option('--log-level <level>', "the API's LOG_LEVEL (info: one JSON line per request, as deployed)", 'info')
  .option('--profile <dir>', "write a CPU profile of the API (node --cpu-prof) into DIR")
  .parse()
  .opts<{ duration: string; connections: string; runs: string; logLevel: string; profile?: string }>();

const dir = path.join(PROJECT_ROOT, 'bench', 'output', 'api-warehouse');
const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);
if ((await discoverLanding(deps.layout)).files.length === 0) {
  await generateReports(deps.db, deps.layout, {
    customers: ['acme', 'globex', 'initech'],
    streams: 3,
    sessions: 400,
    start: new Date('2026-11-20T00:00:00Z'),
    hours: 6,
    seed: 1,
  });
}
await runPipeline(deps, { asOf: new Date('2026-11-20T06:00:00Z') });
const tenant =
  (await findTenant(deps.layout, 'acme')) ??
  (await addTenant(deps.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: null, savingsSharePct: 25 }));
const token = await issueToken(await tokenSecret(deps.layout, null), { role: 'tenant', tenant }, 3600);
await deps.close();

// The real API, as deployed: info-level request logs, going nowhere here.
const api = await startChild(
  dir,
  ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'],
  /API listening on (\S+)/,
  { LOG_LEVEL: opts.logLevel },
  cpuProfileFlags(opts.profile),
);
const { results, lines } = await compareHotRoutes({
  apiUrl: api.url,
  apiPid: api.child.pid,
  token,
  routes: ['/telemetry/metrics/acme:live-main?window=24h', '/telemetry/streams?detail=1'],
  dir,
  connections: Number(opts.connections),
  duration: Number(opts.duration),
  runs: Number(opts.runs),
  nodeFlags: cpuProfileFlags(opts.profile),
});
const load = (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
process.stdout.write(
  `API benchmark: ${opts.connections} connections, ${opts.duration} s per measurement, ${opts.runs} rounds (median, spread), load average ${load}\n${lines.join('\n')}\n`,
);
await writeResult('api', { connections: Number(opts.connections), duration: Number(opts.duration), runs: Number(opts.runs), loadAverage: load, results });
await stopChild(api);
