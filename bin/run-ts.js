#!/usr/bin/env node
// Runs one TypeScript file of the project (benchmarks, child processes of tests) through tsx.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: run-ts.js FILE.ts [args...]\n');
  process.exit(2);
}
process.argv.splice(2, 1);
register();
await import(pathToFileURL(resolve(file)).href);
