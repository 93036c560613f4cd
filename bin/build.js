#!/usr/bin/env node
// Compiles the TypeScript sources into dist/, the JavaScript that the `p2ptel` command runs
// (bin/p2ptel.js): `npm install` and `npm ci` run it (the `prepare` script), `npm run build` runs it
// again after an edit, and `npm start` / `npm run cli` run it with --if-stale before the command.
//
//   node bin/build.js              build dist/
//   node bin/build.js --if-stale   only when dist/ is missing or a file it was built from is newer
//   node bin/build.js --out NAME   build into the folder NAME of the project's root instead (tests)
//   node bin/build.js --with-test-fixtures   also each test/fixtures/X.ts as fixture-X.js (the test
//                                  run's build: its child processes start without tsx)
//
// esbuild (the compiler tsx itself uses, installed with it) bundles the CLI (cli/main.ts →
// dist/main.js) and the collector's batch worker thread (collector/batch-worker.ts →
// dist/batch-worker.js), splitting the code they share and each lazily imported command into
// chunks, so a command loads only its own code (`p2ptel --help` almost none). The packages are
// bundled too (zod, jose, commander, Koa, pino, BullMQ, DuckDB's JavaScript API…), but for those in EXTERNAL:
// a package loaded from node_modules is hundreds of small files to resolve, read and link at every
// start (`serve` loaded 813 modules and took about 1.6 s of CPU to listen, `token` 0.5 s; bundled:
// 1.0 s and 0.25 s, docs/benchmarks.md, "CPU time of the test suite, part 5"). It does not check
// types: `npm run typecheck` does.
//
// Every output file lies directly in the output folder, itself directly in the project's root: one
// folder down, as lib/version.ts is in the sources, so PROJECT_ROOT (the parent of the module's
// folder) is the root either way, and the files read at run time (warehouse/sql, templates,
// config/platform.json, package.json) are read from the sources' tree: they are not copied.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What the build was made from (project-relative paths) and when it started: for --if-stale. */
const RECORD = 'build.json';
/** Besides the bundled sources, files whose change makes a build stale. */
const BUILD_INPUTS = ['bin/build.js', 'tsconfig.json', 'package.json', 'package-lock.json'];

const args = process.argv.slice(2);
const ifStale = args.includes('--if-stale');
const withFixtures = args.includes('--with-test-fixtures');
const outIndex = args.indexOf('--out');
const outName = outIndex >= 0 ? args[outIndex + 1] : 'dist';
if (!outName || outName.includes('/') || outName.includes(path.sep) || outName.startsWith('.')) {
  process.stderr.write('usage: node bin/build.js [--if-stale] [--out NAME]   (NAME: a folder directly in the project root)\n');
  process.exit(2);
}
const OUT = path.join(ROOT, outName);

/** Why the build in OUT is out of date, or null when it is current. */
function staleness() {
  let record;
  try {
    record = JSON.parse(fs.readFileSync(path.join(OUT, RECORD), 'utf8'));
  } catch {
    return `no build in ${outName}/`;
  }
  if (!fs.existsSync(path.join(OUT, 'main.js'))) return `no build in ${outName}/`;
  for (const rel of [...record.inputs, ...BUILD_INPUTS]) {
    let mtime;
    try {
      mtime = fs.statSync(path.join(ROOT, rel)).mtimeMs;
    } catch {
      return `${rel} is gone`;
    }
    if (mtime > record.startedAt) return `${rel} changed`;
  }
  return null;
}

if (ifStale) {
  const why = staleness();
  if (why === null) process.exit(0);
  process.stderr.write(`build: ${why} since the last build: compiling the sources into ${outName}/\n`);
}

/** The test fixtures (child processes of tests) as entry points `fixture-<name>`. */
function fixtureEntries() {
  const dir = path.join(ROOT, 'test', 'fixtures');
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [`fixture-${f.slice(0, -3)}`, `test/fixtures/${f}`]),
  );
}

/**
 * Packages left in node_modules: DuckDB's native addon, the compilers (esbuild spawns its own
 * binary) and the dev tools. (BullMQ is bundled: its Lua scripts are in its JavaScript, and the
 * jobs run in-process, never as sandboxed processor files. msgpackr, under it, then finds no
 * native decoder beside the bundle and uses its JavaScript one, as it does wherever there is none.)
 */
const EXTERNAL = ['@duckdb/node-bindings*', 'esbuild', 'tsx', 'playwright-core', 'vitest', 'typescript'];
/**
 * What the bundled CommonJS packages expect of a module: `require` (of Node's own modules) and
 * `__filename` / `__dirname` (write-file-atomic names its temporary files with it; pino's worker
 * transports, which the project does not use, would look for their files beside it).
 */
const BANNER = [
  "import { createRequire as __p2ptelCreateRequire } from 'node:module';",
  "import { fileURLToPath as __p2ptelFileURLToPath } from 'node:url';",
  'const require = __p2ptelCreateRequire(import.meta.url);',
  'const __filename = __p2ptelFileURLToPath(import.meta.url);',
  "const __dirname = __p2ptelFileURLToPath(new URL('.', import.meta.url));",
].join(' ');
const startedAt = Date.now();
const { build } = await import('esbuild');
// Built beside it, then swapped in: a command started meanwhile finds the old build or the new one.
const tmp = path.join(ROOT, `${outName}-tmp-${process.pid}`);
fs.rmSync(tmp, { recursive: true, force: true });
let result;
try {
  result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'cli/main.ts', 'batch-worker': 'collector/batch-worker.ts', ...(withFixtures ? fixtureEntries() : {}) },
    outdir: tmp,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    external: EXTERNAL,
    banner: { js: BANNER },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Linked maps, without the sources' text (they are in the tree): `node --enable-source-maps`
    // (or NODE_OPTIONS) puts the .ts files and lines in stack traces, at some cost at start.
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
} catch (err) {
  fs.rmSync(tmp, { recursive: true, force: true });
  process.stderr.write(`build: esbuild failed (${err instanceof Error ? err.message.split('\n')[0] : err})\n`);
  process.exit(1);
}

const outputs = Object.keys(result.metafile.outputs).map((f) => path.resolve(ROOT, f));
const nested = outputs.filter((f) => path.dirname(f) !== tmp);
if (nested.length > 0) {
  fs.rmSync(tmp, { recursive: true, force: true });
  throw new Error(`build: every output must lie directly in ${outName}/ (for PROJECT_ROOT), not ${nested.join(', ')}`);
}
const inputs = Object.keys(result.metafile.inputs)
  .filter((f) => !f.split('/').includes('node_modules') && !f.includes(':'))
  .sort();
fs.writeFileSync(path.join(tmp, RECORD), `${JSON.stringify({ startedAt, inputs }, null, 1)}\n`);

const old = path.join(ROOT, `${outName}-old-${process.pid}`);
try {
  fs.renameSync(OUT, old);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
try {
  fs.renameSync(tmp, OUT);
} catch (err) {
  // Another build put its own in place between the two renames: as fresh as this one, kept.
  if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  fs.rmSync(tmp, { recursive: true, force: true });
}
fs.rmSync(old, { recursive: true, force: true });

const files = outputs.filter((f) => f.endsWith('.js')).length;
process.stderr.write(`build: ${inputs.length} sources → ${outName}/ (${files} files) in ${Date.now() - startedAt} ms\n`);
