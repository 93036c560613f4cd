#!/usr/bin/env node
// Entry point of the `p2ptel` command: runs the compiled CLI, dist/main.js, which bin/build.js
// makes (`npm install` runs it; `npm run build` after editing the sources). Without a build, or with
// P2PTEL_FROM_SOURCE=1 (set by the tests and by bin/run-ts.js for its children), it runs the
// TypeScript sources through tsx instead: the same code, ~0.2 s slower to start.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
const fromSource = process.env.P2PTEL_FROM_SOURCE === '1';
if (!fromSource && existsSync(compiled)) {
  await import(compiled.href);
} else {
  if (!fromSource) process.stderr.write('p2ptel: no compiled build in dist/ (`npm run build` makes it): running the TypeScript sources through tsx\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
