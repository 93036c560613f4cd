// Preloaded (node --require) into the child processes of the A/B benchmarks (bench/ab.ts): as the
// process exits, writes to P2PTEL_AB_PEAK_FILE its peak RSS in kB (VmHWM of /proc/self/status) and
// its CPU seconds (user + system, every thread: DuckDB's too), as JSON.
'use strict';
const fs = require('node:fs');

const file = process.env.P2PTEL_AB_PEAK_FILE;
if (file) {
  delete process.env.P2PTEL_AB_PEAK_FILE;
  process.on('exit', () => {
    const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    const u = process.resourceUsage();
    fs.writeFileSync(file, JSON.stringify({ vmHwmKb: m ? Number(m[1]) : null, cpuSeconds: (u.userCPUTime + u.systemCPUTime) / 1e6 }));
  });
}
