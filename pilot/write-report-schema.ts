// npm run schemas: (re)write pilot/pilot-report.schema.json from the zod schema of the report
// (report-schema.ts). The file is generated; test/pilot/report-schema.test.ts fails when it lags.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PILOT_REPORT_SCHEMA_FILE, pilotReportSchemaText } from './pilot-report-schema.ts';

fs.writeFileSync(PILOT_REPORT_SCHEMA_FILE, pilotReportSchemaText());
process.stdout.write(`wrote ${fileURLToPath(PILOT_REPORT_SCHEMA_FILE)}\n`);
