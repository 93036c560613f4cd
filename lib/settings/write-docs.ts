// npm run docs:settings: (re)write the tables of settings in README.md and docs/jobs.md from the
// settings table (lib/settings/docs.ts). test/lib/settings.test.ts fails when they lag.
import fs from 'node:fs';
import { SETTINGS_DOCS, withSettingsTables } from './docs.ts';

for (const file of SETTINGS_DOCS) {
  fs.writeFileSync(file, withSettingsTables(fs.readFileSync(file, 'utf8')));
  process.stdout.write(`wrote ${file}\n`);
}
