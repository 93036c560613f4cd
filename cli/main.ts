// The `p2ptel` command: one CLI for the whole system (`npm run cli -- <command> --help`).
import { Command } from 'commander';
import { registerGenerate } from './commands/generate.ts';
import { registerPipeline } from './commands/pipeline.ts';
import { registerCompact } from './commands/compact.ts';
import { registerServe } from './commands/serve.ts';
import { registerStart } from './commands/start.ts';
import { registerTenants } from './commands/tenants.ts';
import { registerToken } from './commands/token.ts';
import { registerWorker } from './commands/worker.ts';
import { registerSchedule } from './commands/schedule.ts';
import { registerEnqueue } from './commands/enqueue.ts';
import { registerRuns } from './commands/runs.ts';
import { registerReports } from './commands/reports.ts';
import { registerSnapshots } from './commands/snapshots.ts';
import { registerCollect } from './commands/collect.ts';
import { registerIngestKeys } from './commands/ingest-keys.ts';
import { registerKeys } from './commands/keys.ts';
import { registerVerifyReport } from './commands/verify-report.ts';

const program = new Command('p2ptel')
  .description('Telemetry and pilot reports of peer-assisted video delivery')
  .showHelpAfterError('(run with --help for usage)')
  .configureOutput({ outputError: (str, write) => write(str) });

registerStart(program);
registerGenerate(program);
registerPipeline(program);
registerCompact(program);
registerReports(program);
registerVerifyReport(program);
registerServe(program);
registerCollect(program);
registerIngestKeys(program);
registerKeys(program);
registerTenants(program);
registerToken(program);
registerWorker(program);
registerSchedule(program);
registerEnqueue(program);
registerRuns(program);
registerSnapshots(program);

await program.parseAsync(process.argv);
