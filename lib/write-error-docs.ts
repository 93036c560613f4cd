// npm run docs:errors: (re)write the tables of exit codes and internal errors in docs/jobs.md from
// the catalogue (lib/error-catalogue.ts). test/lib/error-catalogue.test.ts fails when they lag.
import fs from 'node:fs';
import { ERROR_DOCS, withErrorTables } from './error-docs.ts';

for (const file of ERROR_DOCS) {
  fs.writeFileSync(file, withErrorTables(fs.readFileSync(file, 'utf8')));
  process.stdout.write(`wrote ${file}\n`);
}
