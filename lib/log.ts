// Structured logging (pino, one JSON line per event) on stderr, so stdout stays for command output.
import { pino, type Logger } from 'pino';
import { BatchedDestination } from './log-destination.ts';

export type { Logger };

/** The one line the request frame logs per request (lib/http/frame.ts). */
export interface RequestLine {
  reqId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  role: string | undefined;
  customerId: string | undefined;
}

/** Writes a request's info line, as pino would. */
export type RequestLineWriter = (line: RequestLine) => void;

/** Loggers made by `createLogger` in buffered mode, with their fast request-line writer. */
const fastWriters = new WeakMap<Logger, RequestLineWriter>();

const INFO = 30;

/**
 * A logger on stderr. Commands write each line at once (`sync`); services (API, collector, workers)
 * batch lines and write them together (at least every second; lib/log-destination.ts), flushed on
 * exit, so a request does not cost a write of its own.
 */
export function createLogger(level: string, name = 'p2ptel', mode: 'sync' | 'buffered' = 'sync'): Logger {
  if (mode === 'sync') return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
  const destination = new BatchedDestination({ fd: 2 });
  process.once('exit', () => destination.end());
  return bufferedLogger(level, name, destination);
}

/** A logger writing to a batching destination, with its fast request-line writer. */
export function bufferedLogger(level: string, name: string, destination: BatchedDestination): Logger {
  const log = pino({ name, level, base: { pid: process.pid } }, destination);
  // pino's line for these options: level, time (epoch ms), the bindings (pid, name), the fields in
  // their order (undefined ones left out), msg. Written here by hand: a request line through pino
  // costs several times more, and there is one per request.
  const q = JSON.stringify;
  const bindings = `,"pid":${process.pid},"name":${q(name)}`;
  fastWriters.set(log, (r) => {
    if (log.levelVal > INFO) return;
    const role = r.role === undefined ? '' : `,"role":${q(r.role)}`;
    const customer = r.customerId === undefined ? '' : `,"customerId":${q(r.customerId)}`;
    destination.write(
      `{"level":${INFO},"time":${Date.now()}${bindings},"reqId":${q(r.reqId)},"method":${q(r.method)},"path":${q(r.path)},"status":${r.status},"ms":${r.ms}${role}${customer},"msg":"request"}\n`,
    );
  });
  return log;
}

/**
 * How the request frame writes its line per request to `log`: straight to the destination for
 * loggers made by `createLogger` in buffered mode (the same JSON pino writes), through `log.info`
 * for any other logger.
 */
export function requestLineWriter(log: Logger): RequestLineWriter {
  return fastWriters.get(log) ?? ((r) => log.info(r, 'request'));
}

/** Write out what a buffered logger holds (before a deliberate exit). */
export function flushLogger(log: Logger): void {
  log.flush();
}

/** A logger that drops everything: for library calls made from tests and tools. */
export const silentLogger: Logger = pino({ level: 'silent' });
