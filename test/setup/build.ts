// Global setup of the test run: the sources compiled once into dist-test/ (bin/build.js, a fraction
// of a second), which every `p2ptel` process a test starts runs (P2PTEL_BUILD, vitest.config.ts):
// the JavaScript that the published command runs, current with the sources, and without tsx
// compiling the CLI again in each of the hundreds of processes the tests start.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

export default function setup(): void {
  const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/build.js'), '--out', 'dist-test', '--with-test-fixtures'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the test run could not compile the sources (bin/build.js --out dist-test --with-test-fixtures): ${r.stderr}`);
}
