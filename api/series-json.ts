// The JSON body of a series window (docs/api.md, "Timeseries"), written as bytes straight
// from the columns of one stream's non-empty buckets: the same bytes as JSON.stringify of the
// plain series (api/timeseries.ts windowSeries), without a string per bucket. A cold 30-day
// answer at 300 s is 8 640 buckets, about 1.5 MB: built as strings, joined and encoded, it cost
// more than the DuckDB read it comes from (docs/api.md, "Series reads").
import type { SeriesColumns } from '../warehouse/reads/index.ts';

const DAY_MS = 86_400_000;
/** Last ms that toISOString writes with a four-digit year (9999-12-31T23:59:59.999Z). */
const MAX_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const START = ascii('{"start":"');
/** The figures of a bucket, in the order of the JSON, each with the text before its value. */
const FIGURES = (['sessions', 'bytesOffloaded', 'bytesFallback', 'offloadRatio', 'avgPeerCount', 'avgBufferHealth', 'rebufferEvents'] as const).map((name, i) => ({
  name,
  key: ascii(`${i === 0 ? '"' : ''},"${name}":`),
}));
const ZEROS = ascii('","sessions":0,"bytesOffloaded":0,"bytesFallback":0,"offloadRatio":0,"avgPeerCount":0,"avgBufferHealth":0,"rebufferEvents":0}');
const [COMMA, CLOSE, ZERO, COLON, DOT, Z] = [44, 125, 48, 58, 46, 90];

/**
 * Longest text of a JS number (-0.0000012345678901234567: below 1e-6 it turns to exponents) and of
 * a start (+275760-09-13T00:00:00.000Z).
 */
const MAX_NUMBER = 25;
const MAX_START = 27;
/** Most bytes one bucket takes: a start, its figures with their keys, the closing brace and a comma. */
const MAX_BUCKET = START.length + MAX_START + FIGURES.reduce((n, f) => n + f.key.length + MAX_NUMBER, 0) + 2;

/**
 * Where bodies are written before they are copied out at their exact size: one per process (a body
 * is written in one synchronous call), grown to the largest body asked for (at most MAX_BUCKETS
 * buckets: a few MB).
 */
let scratch = Buffer.allocUnsafeSlow(1 << 16);

class Writer {
  pos = 0;
  /** The day whose date (YYYY-MM-DDT) `dayText` holds. */
  private day = Number.NaN;
  private dayText = new Uint8Array(11);

  constructor(readonly buf: Buffer) {}

  /** Past the end of the buffer, only counted (see seriesJsonBody). */
  bytes(b: Uint8Array): void {
    if (this.pos + b.length <= this.buf.length) this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Text that is ASCII (numbers, ISO instants). */
  ascii(s: string): void {
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
    this.pos = pos;
  }

  /** A number as JSON.stringify writes it. */
  number(x: number): void {
    if (Number.isSafeInteger(x) && x >= 0) this.whole(x);
    else this.ascii(Number.isFinite(x) ? String(x) : 'null');
  }

  /** A whole number ≥ 0 (−0 writes 0). */
  private whole(x: number): void {
    const buf = this.buf;
    if (x < 10) {
      buf[this.pos++] = ZERO + x;
      return;
    }
    let digits = 1;
    for (let p = 10; p <= x; p *= 10) digits++;
    let pos = this.pos + digits;
    this.pos = pos;
    while (x >= 10) {
      const q = Math.floor(x / 10);
      buf[--pos] = ZERO + (x - q * 10);
      x = q;
    }
    buf[--pos] = ZERO + x;
  }

  private pad(n: number, width: 2 | 3): void {
    const buf = this.buf;
    if (width === 3) buf[this.pos++] = ZERO + Math.floor(n / 100);
    buf[this.pos++] = ZERO + (Math.floor(n / 10) % 10);
    buf[this.pos++] = ZERO + (n % 10);
  }

  /** toISOString of an instant: the date formatted once per day, the time of day by arithmetic. */
  instant(ms: number): void {
    if (ms < 0 || ms > MAX_FOUR_DIGIT_YEAR_MS) {
      this.ascii(new Date(ms).toISOString());
      return;
    }
    const d = Math.floor(ms / DAY_MS);
    if (d !== this.day) {
      this.day = d;
      this.dayText = ascii(new Date(d * DAY_MS).toISOString().slice(0, 11));
    }
    this.bytes(this.dayText);
    const t = ms - d * DAY_MS;
    this.pad(Math.floor(t / 3_600_000), 2);
    this.buf[this.pos++] = COLON;
    this.pad(Math.floor(t / 60_000) % 60, 2);
    this.buf[this.pos++] = COLON;
    this.pad(Math.floor(t / 1000) % 60, 2);
    this.buf[this.pos++] = DOT;
    this.pad(t % 1000, 3);
    this.buf[this.pos++] = Z;
  }
}

/**
 * The body of a window's series: buckets from `from` to `to` (bucket starts, ms), the non-empty
 * ones from `c` (sorted by start; rows outside the range are skipped), the others with zeros.
 */
export function seriesJsonBody(streamId: string, window: string, bucketSeconds: number, from: number, to: number, c: SeriesColumns): Buffer {
  const step = bucketSeconds * 1000;
  const buckets = Math.max(0, Math.floor((to - from) / step) + 1);
  const head = `{"streamId":${JSON.stringify(streamId)},"window":${JSON.stringify(window)},"bucketSeconds":${bucketSeconds},"from":"${new Date(from).toISOString()}","to":"${new Date(to).toISOString()}","buckets":[`;
  let size = Buffer.byteLength(head) + buckets * MAX_BUCKET + 2;
  for (;;) {
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.max(size, scratch.length * 2));
    const end = writeBody(new Writer(scratch), head, step, from, to, c);
    // Copied out at its size: the cache holds exactly the body.
    if (end <= scratch.length) return Buffer.from(scratch.subarray(0, end));
    // Longer than its bound (it cannot be, by MAX_BUCKET): what went past the end was dropped
    // but counted, so it is written again in a buffer of its size.
    size = end;
  }
}

/** Writes the body into `w` from its start; returns where it ends. */
function writeBody(w: Writer, head: string, step: number, from: number, to: number, c: SeriesColumns): number {
  w.pos = w.buf.write(head, 0, 'utf8');
  const n = c.startMs.length;
  const figures = FIGURES.map((f) => ({ key: f.key, values: c[f.name] }));
  let i = 0;
  while (i < n && c.startMs[i]! < from) i++;
  for (let start = from; start <= to; start += step) {
    if (start !== from) w.buf[w.pos++] = COMMA;
    w.bytes(START);
    w.instant(start);
    if (i < n && c.startMs[i] === start) {
      for (const f of figures) {
        w.bytes(f.key);
        w.number(f.values[i]!);
      }
      w.buf[w.pos++] = CLOSE;
      i++;
    } else {
      w.bytes(ZEROS);
    }
  }
  w.buf[w.pos++] = 93; // ]
  w.buf[w.pos++] = CLOSE;
  return w.pos;
}
