// A pino logger whose JSON lines a test reads back: each line parsed, in the order written.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export function capturedLog(level = 'info'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
