// Structured logging (pino, one JSON line per event) on stderr, so stdout stays for command output.
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * A logger on stderr. Commands write each line at once (`sync`); services (API, workers) buffer
 * lines and write them in batches (at least every second), flushed on exit, so a request does not
 * cost a write of its own.
 */
export function createLogger(level: string, name = 'p2ptel', mode: 'sync' | 'buffered' = 'sync'): Logger {
  const destination =
    mode === 'sync'
      ? pino.destination({ fd: 2, sync: true })
      : // Large batches: a write per ~250 request lines rather than per 16 (the per-write cost showed
        // in the API's profile under load), flushed at least every second when traffic is light.
        pino.destination({ fd: 2, sync: false, minLength: 60 * 1024, maxWrite: 64 * 1024, periodicFlush: 1000 });
  if (mode === 'buffered') process.once('exit', () => destination.flushSync());
  return pino({ name, level, base: { pid: process.pid } }, destination);
}

/** Write out what a buffered logger holds (before a deliberate exit). */
export function flushLogger(log: Logger): void {
  log.flush();
}

/** A logger that drops everything: for library calls made from tests and tools. */
export const silentLogger: Logger = pino({ level: 'silent' });
