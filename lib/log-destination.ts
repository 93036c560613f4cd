// Where a service's log lines go: a batching writer on a file descriptor (stderr). Lines gather in
// an array and are written together once ~64 KiB wait, or at least every second, so a request's
// log line costs no write of its own (and no copy: they are joined once per batch). (sonic-boom,
// pino's own destination, appends each line to one growing string and measures its byte length on
// every write: with large batches that copies the whole batch per line, which showed as a third of
// the API's CPU per request.)
// Bounded: while the descriptor does not keep up, about `maxBufferedBytes` wait at most; lines beyond are
// dropped and counted, and the count is written as a line of its own once there is room again.
import fs from 'node:fs';

export interface BatchedDestinationOptions {
  fd: number;
  /** Characters per write: a batch is written once this many wait (default 64 Ki). */
  chunkChars?: number;
  /** Write what waits at least this often, ms (default 1000). */
  flushEveryMs?: number;
  /** Most bytes kept waiting; further lines are dropped and counted (default 16 MiB). */
  maxBufferedBytes?: number;
}

const RETRY_MS = 10;

export class BatchedDestination {
  /** Batches waiting for the descriptor, oldest first. */
  private readonly full: Buffer[] = [];
  /** Lines of the open batch, and their characters. */
  private lines: string[] = [];
  private used = 0;
  private writing = false;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly fd: number;
  private readonly chunkChars: number;
  private readonly maxChunks: number;
  private readonly idle: (() => void)[] = [];

  constructor(opts: BatchedDestinationOptions) {
    this.fd = opts.fd;
    this.chunkChars = opts.chunkChars ?? 64 * 1024;
    this.maxChunks = Math.max(1, Math.floor((opts.maxBufferedBytes ?? 16 * 1024 * 1024) / this.chunkChars));
    this.timer = setInterval(() => this.flush(), opts.flushEveryMs ?? 1000);
    this.timer.unref();
  }

  /** One log line (pino calls this with the serialised line, newline included). */
  write(line: string): boolean {
    if (this.full.length >= this.maxChunks) {
      this.dropped++;
      return false;
    }
    this.lines.push(line);
    this.used += line.length;
    if (this.used >= this.chunkChars) {
      this.seal();
      this.startWrite();
    }
    return true;
  }

  /** Write what waits now (asynchronously); `cb` once everything written so far is out. */
  flush(cb?: (err?: Error) => void): void {
    if (cb) this.idle.push(() => cb());
    this.seal();
    this.startWrite();
    this.settle();
  }

  /** Write everything now, blocking (at exit). */
  flushSync(): void {
    this.seal();
    // A write in flight holds the oldest chunk; it is written again here rather than lost (a
    // duplicated batch of lines at exit is the lesser harm).
    for (const data of this.full.splice(0)) {
      let offset = 0;
      while (offset < data.length) {
        try {
          offset += fs.writeSync(this.fd, data, offset, data.length - offset);
        } catch (err) {
          // A non-blocking pipe that is full: wait for it rather than lose the last lines.
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_MS);
        }
      }
    }
  }

  /** Stop the periodic flush and write what waits (blocking). */
  end(): void {
    clearInterval(this.timer);
    this.flushSync();
  }

  /** Move the open batch (if it holds anything) to the waiting ones, and the dropped count with it. */
  private seal(): void {
    if (this.dropped > 0 && this.full.length < this.maxChunks) {
      this.lines.push(`${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg: `log lines dropped: ${this.dropped} (stderr did not keep up)` })}\n`);
      this.dropped = 0;
    }
    if (this.lines.length === 0) return;
    this.full.push(Buffer.from(this.lines.join('')));
    this.lines = [];
    this.used = 0;
  }

  private startWrite(): void {
    if (this.writing || this.full.length === 0) return;
    this.writing = true;
    this.writeOut(this.full[0]!, 0);
  }

  private writeOut(data: Buffer, offset: number): void {
    fs.write(this.fd, data, offset, data.length - offset, null, (err, written) => {
      if (err) {
        if (err.code === 'EAGAIN') {
          setTimeout(() => this.writeOut(data, offset), RETRY_MS).unref();
          return;
        }
        // stderr is gone (closed pipe): nothing to write logs to; drop what waits, keep serving.
        this.full.length = 0;
        this.writing = false;
        this.settle();
        return;
      }
      if (offset + written < data.length) {
        this.writeOut(data, offset + written);
        return;
      }
      if (this.full[0] === data) this.full.shift();
      this.writing = false;
      this.startWrite();
      this.settle();
    });
  }

  /** Callers of `flush` wait until what they asked for (and what came since) is out. */
  private settle(): void {
    if (this.idle.length === 0 || this.writing) return;
    if (this.lines.length > 0 || this.dropped > 0) this.seal();
    if (this.full.length > 0) {
      this.startWrite();
      return;
    }
    for (const cb of this.idle.splice(0)) cb();
  }
}
