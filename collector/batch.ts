// What a posted batch becomes, from its bytes (gzip'd or not) to the spool's lines: inflated within
// its limit (a gzip bomb stops at the limit), parsed (a JSON array, {"reports": [...]}, or NDJSON
// line by line), counted against the report limit, checked for a report of another customer's
// stream (the whole request is refused), then each report validated on its own and the valid ones
// serialised in the spool's form. Plain data in, plain data out: it runs in the collector's batch
// workers (collector/batch-pool.ts) or in process, with the same code either way, and its problems
// are data that the route turns into the problem+json answers of collector/problems.ts. It loads
// neither Koa nor DuckDB: a worker thread starts in a fraction of a second.
import { gunzip, gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { checkReport, MAP_COLUMNS, type SpoolReport, type TimeWindow } from './session-report-schema.ts';
import type { ReportSpans } from './session-report-spans.ts';
import { Deadline, DEFAULT_MAX_CHECK_MS, readReports, type BatchLimits, type BatchProblem, type Rejection } from './batch-read.ts';

export { DEFAULT_MAX_CHECK_MS, type BatchLimits, type BatchProblem, type Rejection } from './batch-read.ts';

const gunzipAsync = promisify(gunzip);

/** How the request said its body is written. */
export interface BatchRequest {
  /** `gzip` (or `x-gzip`), else the body is as sent. */
  gzip: boolean;
  ndjson: boolean;
  /** The customer of the ingest key: every stream id must carry its prefix. */
  customerId: string;
  window: TimeWindow;
}

/** What checking a batch cost: the per-key budgets are charged with it (collector/limits.ts). */
export interface BatchWork {
  /** Bytes of the body once inflated (as sent when not gzip'd). */
  inflatedBytes: number;
  /** Time spent inflating, reading and checking it. */
  ms: number;
}

export type BatchOutcome = (
  | {
      ok: true;
      /** Reports in the request (what the rate limit counts). */
      reports: number;
      accepted: number;
      /**
       * The accepted reports as spool lines (NDJSON, each line ending in a newline):
       * `{"tsu":<ts in epoch µs>,"r":<the report>}`, the report as it was posted when its text can
       * be kept (collector/session-report-spans.ts), else serialised.
       */
      lines: Uint8Array;
      rejected: Rejection[];
    }
  | {
      ok: false;
      /** Reports in the request, when it could be read and was within the limit; else null. */
      reports: number | null;
      problem: BatchProblem;
    }
) & { work: BatchWork };

/** An outcome without its cost yet (added by the entry points). */
type Checked = BatchOutcome extends infer O ? (O extends unknown ? Omit<O, 'work'> : never) : never;

const failed = (problem: BatchProblem, reports: number | null = null): Checked => ({ ok: false, reports, problem });

const tooLargeInflated = (limits: BatchLimits): BatchProblem => ({
  code: 'tooLarge',
  detail: `The body is larger than ${limits.maxInflatedBytes} bytes once decompressed.`,
});
const NOT_GZIP: BatchProblem = { code: 'unreadableBody', detail: 'Content-Encoding says gzip, but the body is not valid gzip.' };

function inflateFailure(err: unknown, limits: BatchLimits): BatchProblem {
  if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) return tooLargeInflated(limits);
  return NOT_GZIP;
}

/** Where a batch's spool lines are written: a buffer of exactly `size` bytes, owning its memory. */
export type LinesBuffer = (size: number) => Uint8Array;

const freshBuffer: LinesBuffer = (size) => new Uint8Array(size);

/**
 * Check a batch where it runs on its own thread: inflating blocks nothing else. `output` gives the
 * buffer of its spool lines (a batch worker reuses buffers the event loop has written).
 */
export function checkBatchSync(raw: Uint8Array, req: BatchRequest, limits: BatchLimits, output: LinesBuffer = freshBuffer): BatchOutcome {
  const started = performance.now();
  let body: Uint8Array = raw;
  if (req.gzip) {
    try {
      body = gunzipSync(raw, { maxOutputLength: limits.maxInflatedBytes });
    } catch (err) {
      return costed(failed(inflateFailure(err, limits)), limits.maxInflatedBytes, started);
    }
  }
  return costed(checkInflated(body, req, limits, output, started), body.length, started);
}

/** Check a batch on the event loop's thread: inflating runs on libuv's pool. */
export async function checkBatch(raw: Uint8Array, req: BatchRequest, limits: BatchLimits): Promise<BatchOutcome> {
  const started = performance.now();
  let body: Uint8Array = raw;
  if (req.gzip) {
    try {
      body = await gunzipAsync(raw, { maxOutputLength: limits.maxInflatedBytes });
    } catch (err) {
      return costed(failed(inflateFailure(err, limits)), limits.maxInflatedBytes, started);
    }
  }
  return costed(checkInflated(body, req, limits, freshBuffer, started), body.length, started);
}

function costed(outcome: Checked, inflatedBytes: number, started: number): BatchOutcome {
  return { ...outcome, work: { inflatedBytes, ms: performance.now() - started } } as BatchOutcome;
}

const encoder = new TextEncoder();

function checkInflated(body: Uint8Array, req: BatchRequest, limits: BatchLimits, output: LinesBuffer, started: number): Checked {
  if (!req.gzip && body.length > limits.maxInflatedBytes) return failed({ code: 'tooLarge', detail: `The body is larger than ${limits.maxInflatedBytes} bytes.` });
  const deadline = new Deadline(started, limits.maxCheckMs ?? DEFAULT_MAX_CHECK_MS);
  const read = readReports(body, req.ndjson, limits, deadline);
  if ('code' in read) return failed(read);
  const { items, spans } = read;
  if (items.length > limits.maxReports) return failed({ code: 'tooManyReports', max: limits.maxReports });

  // Ownership first: one report of another customer's stream refuses the whole request.
  const prefix = `${req.customerId}:`;
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    if (!item.ok || typeof item.value !== 'object' || item.value === null) continue;
    const streamId = (item.value as Record<string, unknown>)['streamId'];
    if (typeof streamId === 'string' && streamId.includes(':') && !streamId.startsWith(prefix)) return failed({ code: 'foreignStream', index }, items.length);
  }

  const rejected: Rejection[] = [];
  const accepted: Accepted[] = [];
  for (let index = 0; index < items.length; index++) {
    if (deadline.passed(index)) return failed({ code: 'tooSlow', ms: deadline.ms }, items.length);
    const item = items[index]!;
    if (!item.ok) {
      rejected.push({ index, field: null, reason: item.reason });
      continue;
    }
    const r = checkReport(item.value, req.window);
    if (!r.ok) {
      rejected.push({ index, field: r.field, reason: r.reason });
      continue;
    }
    // Its own text only when the parsed report is that text, key for key: no unknown field was
    // dropped (checkReport kept the parsed object) and no key of the text was a duplicate.
    const own = spans !== null && r.report === item.value && spans.keys[index] === keyCount(r.report);
    accepted.push(own ? { ts: r.report.ts, span: index } : { ts: r.report.ts, text: encoder.encode(JSON.stringify(r.report)) });
  }
  if (accepted.length === 0 && rejected.length > 0) return failed({ code: 'allRejected', rejected }, items.length);
  return { ok: true, reports: items.length, accepted: accepted.length, lines: spoolLines(body, spans, accepted, output), rejected };
}

/** An accepted report: its ts (epoch µs), and its own text (a span of the body) or its serialisation. */
type Accepted = { ts: number; span: number } | { ts: number; text: Uint8Array };

/** Keys of a validated report: its own, and those of its map columns (the only nested objects). */
function keyCount(report: SpoolReport): number {
  let n = Object.keys(report).length;
  for (const name of MAP_COLUMNS) {
    const m = report[name];
    if (typeof m === 'object' && m !== null) n += Object.keys(m).length;
  }
  return n;
}

const LINE_HEAD = encoder.encode('{"tsu":');
const LINE_MIDDLE = encoder.encode(',"r":');
const LINE_TAIL = encoder.encode('}\n');

/**
 * The spool lines of the accepted reports, in a buffer from `output` (never a slice of Node's
 * shared pool: it can be handed across threads), every byte of it written.
 */
function spoolLines(body: Uint8Array, spans: ReportSpans | null, accepted: readonly Accepted[], output: LinesBuffer): Uint8Array {
  if (accepted.length === 0) return new Uint8Array(0);
  const fixed = LINE_HEAD.length + LINE_MIDDLE.length + LINE_TAIL.length;
  const stamps: string[] = [];
  let size = 0;
  for (const a of accepted) {
    const stamp = String(a.ts);
    stamps.push(stamp);
    size += fixed + stamp.length + ('span' in a ? spans!.end[a.span]! - spans!.start[a.span]! : a.text.length);
  }
  const out = output(size);
  let at = 0;
  for (let k = 0; k < accepted.length; k++) {
    const a = accepted[k]!;
    const stamp = stamps[k]!;
    out.set(LINE_HEAD, at);
    at += LINE_HEAD.length;
    for (let c = 0; c < stamp.length; c++) out[at++] = stamp.charCodeAt(c);
    out.set(LINE_MIDDLE, at);
    at += LINE_MIDDLE.length;
    if ('span' in a) {
      const from = spans!.start[a.span]!;
      const to = spans!.end[a.span]!;
      out.set(body.subarray(from, to), at);
      // Line breaks between its tokens become spaces: a line break cannot be inside a JSON string.
      if (spans!.multiline[a.span] === 1) {
        for (let c = at; c < at + (to - from); c++) if (out[c] === 0x0a || out[c] === 0x0d) out[c] = 0x20;
      }
      at += to - from;
    } else {
      out.set(a.text, at);
      at += a.text.length;
    }
    out.set(LINE_TAIL, at);
    at += LINE_TAIL.length;
  }
  return out;
}

