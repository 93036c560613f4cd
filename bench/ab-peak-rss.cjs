// Preloaded (node --require) into the child processes of the A/B benchmarks (bench/ab.ts): as the
// process exits, writes its peak RSS in kB (VmHWM of /proc/self/status) to P2PTEL_AB_PEAK_FILE.
'use strict';
const fs = require('node:fs');

const file = process.env.P2PTEL_AB_PEAK_FILE;
if (file) {
  delete process.env.P2PTEL_AB_PEAK_FILE;
  process.on('exit', () => {
    const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) fs.writeFileSync(file, m[1]);
  });
}
