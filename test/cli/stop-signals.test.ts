// A long-running command (serve, collect, start) stops cleanly on SIGINT or SIGTERM, exit 0, even
// when the signal comes while an atomic write is in flight: signal-exit (under write-file-atomic
// and proper-lockfile) then listens too, and raised the signal again, killing the process in the
// middle of its stop, when the command's own listener was a `once` one that had just gone
// (lib/signals.ts). A second signal ends it at once, exit 0.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fixtureArgv } from '../helpers/fixtures.ts';

/** Run the fixture; at each of `steps`, wait for its line, then send its signal. */
async function stopFixture(steps: [string, NodeJS.Signals][]): Promise<{ code: number | null; signal: string | null; out: string }> {
  const child = spawn(process.execPath, fixtureArgv('stop-during-atomic-write.ts'), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  for (const [line, signal] of steps) {
    while (!out.includes(`${line}\n`)) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the fixture ended before ${line}: ${out}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill(signal);
  }
  return { ...(await exited), out };
}

describe('closeOnSignals', () => {
  it('closes the service and exits 0 on SIGINT or SIGTERM that comes during an atomic write', async () => {
    const [int, term] = await Promise.all([stopFixture([['READY', 'SIGINT']]), stopFixture([['READY', 'SIGTERM']])]);
    for (const r of [int, term]) {
      expect({ code: r.code, signal: r.signal }, r.out).toEqual({ code: 0, signal: null });
      expect(r.out).toContain('CLOSED\n');
    }
  });

  it('exits 0 at once on a second signal, without waiting for the close', async () => {
    const r = await stopFixture([
      ['READY', 'SIGINT'],
      ['CLOSING', 'SIGINT'],
    ]);
    expect({ code: r.code, signal: r.signal }, r.out).toEqual({ code: 0, signal: null });
    expect(r.out).not.toContain('CLOSED');
  });
});
