#!/usr/bin/env node
// Entry point of the `p2ptel` command: runs the compiled CLI, dist/main.js, which bin/build.js
// makes (`npm install` runs it; `npm run build` after editing the sources); P2PTEL_BUILD names
// another build folder of the project's root (the test run builds its own, test/setup/build.ts).
// Without a build, or with P2PTEL_FROM_SOURCE=1 (set by bin/run-ts.js for its children), it runs
// the TypeScript sources through tsx instead: the same code, ~0.2 s slower to start.
import { existsSync } from 'node:fs';

// A worker or `start` stopped while its code is still loading stops cleanly (exit 0) as a running
// one does: the signal is kept from here on for the command's own handling (lib/signals.ts).
if (process.argv[2] === 'worker' || process.argv[2] === 'start') {
  const keep = (signal) => {
    process[Symbol.for('p2ptel.earlySignal')] ??= signal;
  };
  process[Symbol.for('p2ptel.earlySignalListener')] = keep;
  process.on('SIGTERM', keep);
  process.on('SIGINT', keep);
  // What `ps` and `top` show, and the sign that the signals are kept from here on (a test waits for it).
  process.title = `p2ptel ${process.argv[2]}`;
}

const build = process.env.P2PTEL_BUILD || 'dist';
const compiled = new URL(`../${build}/main.js`, import.meta.url);
const fromSource = process.env.P2PTEL_FROM_SOURCE === '1';
if (!fromSource && existsSync(compiled)) {
  await import(compiled.href);
} else {
  if (!fromSource) process.stderr.write(`p2ptel: no compiled build in ${build}/ (\`npm run build\` makes dist/): running the TypeScript sources through tsx\n`);
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
