#!/usr/bin/env node
// Runs one TypeScript file of the project (benchmarks, child processes of tests) through tsx. The
// `p2ptel` commands it starts run from the sources too (P2PTEL_FROM_SOURCE, bin/p2ptel.js), never
// from a dist/ build that may be older than them.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: run-ts.js FILE.ts [args...]\n');
  process.exit(2);
}
process.argv.splice(2, 1);
process.env.P2PTEL_FROM_SOURCE = '1';
register();
await import(pathToFileURL(resolve(file)).href);
