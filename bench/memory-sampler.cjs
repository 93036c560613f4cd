// Preloaded into a server under test (`node --require bench/memory-sampler.cjs ...`, with
// MEMORY_SAMPLES=FILE): appends its process.memoryUsage() (rss, heapTotal, heapUsed, external,
// arrayBuffers, in bytes) as a JSON line to FILE every MEMORY_SAMPLE_MS (250 ms by default), so that
// a benchmark can say where the process's memory goes (JS heap, buffers, or native: DuckDB).
'use strict';
const fs = require('node:fs');
const file = process.env.MEMORY_SAMPLES;
if (file) {
  const every = Number(process.env.MEMORY_SAMPLE_MS || 250);
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    fs.appendFileSync(file, `${JSON.stringify({ t: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers })}\n`);
  }, every);
  timer.unref();
}
