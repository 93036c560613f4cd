// The termination signals of a worker process, heard from its first line on: bin/p2ptel.js keeps
// a SIGTERM or SIGINT that arrives while the worker's code is still loading (under a key of the
// global symbol registry, the one thing the launcher and the bundle share), and the worker takes
// it over here, so that a signal at any moment of its start-up ends in the same clean stop.
import type { Logger } from './log.ts';

const EARLY_SIGNAL = Symbol.for('p2ptel.earlySignal');
const EARLY_LISTENER = Symbol.for('p2ptel.earlySignalListener');

type Launcher = { [EARLY_SIGNAL]?: string; [EARLY_LISTENER]?: (signal: NodeJS.Signals) => void };

/** The signal the launcher heard before this process listened itself (null: none), its listener removed. */
function takeEarlySignal(): string | null {
  const launcher = process as unknown as Launcher;
  const listener = launcher[EARLY_LISTENER];
  if (listener) {
    process.off('SIGTERM', listener);
    process.off('SIGINT', listener);
    delete launcher[EARLY_LISTENER];
  }
  return launcher[EARLY_SIGNAL] ?? null;
}

/**
 * The first SIGTERM or SIGINT (one heard while loading included); a second one exits at once
 * (`second` is logged: for a worker, running jobs are retaken by other workers).
 *
 * The listeners stay for the life of the process, the stop included: never `process.once`.
 * signal-exit (under proper-lockfile and write-file-atomic) listens to the same signals and, when
 * it finds its own listeners alone, takes the process for dying and raises the signal again,
 * which then kills it. A `once` listener removed as it runs left it alone for a signal that
 * came while an atomic write was in flight (write-file-atomic adds its listener for the write's
 * length, after ours): the process died of SIGINT, no exit code, in the middle of its clean stop.
 */
export function terminationSignal(log: Logger, second = 'second signal: exiting now; running jobs are retaken once their locks expire'): Promise<string> {
  return new Promise((resolve) => {
    let received = false;
    const on = (signal: string) => {
      if (received) {
        log.warn({ signal }, second);
        process.exit(0);
      }
      received = true;
      resolve(signal);
    };
    // Ours first, then the launcher's removed: removing a signal's last listener gives it back its
    // default action (death) until the next one is added, and a signal is delivered whenever it
    // comes, not between two turns of the event loop. One that comes meanwhile is heard by ours
    // alone (listeners are called on a later turn, the launcher's removed by then).
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
    const early = takeEarlySignal();
    if (early) on(early);
  });
}
