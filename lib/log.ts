// Structured logging (pino, one JSON line per event) on stderr, so stdout stays for command output.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'p2ptel'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}

/** A logger that drops everything: for library calls made from tests and tools. */
export const silentLogger: Logger = pino({ level: 'silent' });
