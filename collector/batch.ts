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
import { isUtf8 } from 'node:buffer';
import { checkReport, MAP_COLUMNS, type SpoolReport, type TimeWindow } from './report-schema.ts';
import { lineSpans, MAX_NESTING, nestingExceeds, reportSpans, type ReportSpans } from './report-text.ts';

const gunzipAsync = promisify(gunzip);

export interface Rejection {
  /** Position of the report in the request (0-based; for NDJSON, among the non-empty lines). */
  index: number;
  /** The offending JSON field, or null when the report as a whole is wrong. */
  field: string | null;
  reason: string;
}

export interface BatchLimits {
  maxInflatedBytes: number;
  maxReports: number;
  /**
   * Time a batch's reports may take to be read and checked (ms): past it, the rest is not read
   * and the request is refused (413). Default: DEFAULT_MAX_CHECK_MS.
   */
  maxCheckMs?: number;
}

export const DEFAULT_MAX_CHECK_MS = 1000;

/** How the request said its body is written. */
export interface BatchRequest {
  /** `gzip` (or `x-gzip`), else the body is as sent. */
  gzip: boolean;
  ndjson: boolean;
  /** The customer of the ingest key: every stream id must carry its prefix. */
  customerId: string;
  window: TimeWindow;
}

export type BatchProblem =
  | { code: 'tooLarge'; detail: string }
  | { code: 'unreadableBody'; detail: string }
  | { code: 'invalidJson'; detail: string }
  | { code: 'tooManyReports'; max: number }
  | { code: 'tooDeep'; max: number }
  | { code: 'tooSlow'; ms: number }
  | { code: 'foreignStream'; index: number }
  | { code: 'allRejected'; rejected: Rejection[] };

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
       * be kept (collector/report-text.ts), else serialised.
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

/** A clock that says when a batch has used up its time (checked every few reports). */
class Deadline {
  private readonly at: number;
  constructor(
    started: number,
    readonly ms: number,
  ) {
    this.at = started + ms;
  }
  passed(i: number): boolean {
    return (i & 15) === 15 && performance.now() > this.at;
  }
}

/** A report as it came: parsed, or the reason its line could not be (NDJSON only). */
type BodyItem = { ok: true; value: unknown } | { ok: false; reason: string };

// A byte order mark is kept, as Buffer#toString keeps it (and JSON.parse refuses it).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
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

/** A body's reports as JSON.parse reads them, and where each lies in its bytes when that can be told for sure. */
interface BodyReports {
  items: BodyItem[];
  spans: ReportSpans | null;
}

/**
 * The reports of a body. A UTF-8 body is read a report at a time: each report's bytes decoded and
 * parsed on their own (an NDJSON line, or an element of the reports' array, found by
 * collector/report-text.ts), which gives the values the whole body's text gives, without making
 * that text (a string of the body's size, 370 KiB for 500 reports: V8 keeps such strings in its
 * large-object space, and making one costs as much as decoding the whole body). A JSON body whose
 * reports cannot be told apart for sure, or whose pieces are not all JSON, or one that is not
 * UTF-8, is read whole, as it always was; its errors are told from that reading.
 */
function readReports(body: Uint8Array, ndjson: boolean, limits: BatchLimits, deadline: Deadline): BodyReports | BatchProblem {
  const utf8 = isUtf8(body);
  // Read a report at a time, nesting is bounded on the way (report-text.ts); any other reading is
  // JSON.parse of a whole text, which takes any depth: the depth is read first.
  if (utf8 && !ndjson) {
    const byReport = jsonReports(Buffer.from(body.buffer, body.byteOffset, body.byteLength), limits, deadline);
    if (byReport !== null) return byReport;
  }
  if (nestingExceeds(body, MAX_NESTING)) return TOO_DEEP;
  if (utf8 && ndjson) {
    const parsed = ndjsonItems(bodyLines(Buffer.from(body.buffer, body.byteOffset, body.byteLength)), limits, deadline);
    if ('code' in parsed) return parsed;
    return { items: parsed.items, spans: parsed.lineOf === null ? null : lineSpans(body, parsed.lineOf) };
  }
  // The reports' own text, when it can be told for sure: valid UTF-8 (what JSON.parse read, since
  // the decoder replaces nothing then), and the wrapper's keys all distinct (an escaped second
  // "reports" key would otherwise hide the array JSON.parse read).
  const text = decoder.decode(body);
  const parsed = ndjson ? ndjsonItems(text.split('\n'), limits, deadline) : jsonItems(text);
  if ('code' in parsed) return parsed;
  let spans: ReportSpans | null = null;
  if (utf8) {
    if (parsed.lineOf !== null) {
      spans = lineSpans(body, parsed.lineOf);
    } else {
      spans = reportSpans(body, parsed.items.length);
      if (spans !== null && (spans.count !== parsed.items.length || spans.topKeys !== parsed.topKeys)) spans = null;
    }
  }
  return { items: parsed.items, spans };
}

/**
 * A JSON body read a report at a time, or null when it must be read whole: the text around the
 * reports' array must parse as the same wrapper with an empty array (an array, or an object whose
 * keys are those the text shows, "reports" among them), and each report must parse. The body is
 * then JSON, and what JSON.parse reads of it whole is that wrapper holding these reports.
 */
function jsonReports(body: Buffer, limits: BatchLimits, deadline: Deadline): BodyReports | BatchProblem | null {
  const spans = reportSpans(body, limits.maxReports);
  if (spans === null) return null;
  try {
    const wrapper: unknown = JSON.parse(body.toString('utf8', 0, spans.arrayOpen + 1) + body.toString('utf8', spans.arrayClose));
    const empty = (v: unknown) => Array.isArray(v) && v.length === 0;
    if (spans.topKeys < 0 ? !empty(wrapper) : !isObject(wrapper) || !empty(wrapper['reports']) || Object.keys(wrapper).length !== spans.topKeys) return null;
    const items: BodyItem[] = new Array<BodyItem>(spans.count);
    for (let i = 0; i < spans.count; i++) {
      if (deadline.passed(i)) return { code: 'tooSlow', ms: deadline.ms };
      items[i] = { ok: true, value: JSON.parse(body.toString('utf8', spans.start[i], spans.end[i])) };
    }
    return { items, spans };
  } catch {
    return null;
  }
}

/** The lines of a UTF-8 body, each decoded on its own: the strings `text.split('\n')` gives of its whole text. */
function* bodyLines(body: Buffer): Generator<string> {
  let at = 0;
  for (;;) {
    const lf = body.indexOf(LF, at);
    if (lf < 0) break;
    yield body.toString('utf8', at, lf);
    at = lf + 1;
  }
  yield body.toString('utf8', at);
}

const LF = 0x0a;

const TOO_DEEP: BatchProblem = { code: 'tooDeep', max: MAX_NESTING };

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

/** The body's reports, and the keys of its top-level object (-1 for an array or NDJSON). */
interface BodyItems {
  items: BodyItem[];
  topKeys: number;
  /** NDJSON: the line (0-based, among all lines of the body) of each item; null for a JSON body. */
  lineOf: number[] | null;
}

function jsonItems(text: string): BodyItems | BatchProblem {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { code: 'invalidJson', detail: 'The body is not valid JSON.' };
  }
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json['reports']) ? json['reports'] : null;
  if (list === null) return { code: 'invalidJson', detail: 'The body must be {"reports": [...]} or a JSON array of reports.' };
  return { items: list.map((value) => ({ ok: true, value })), topKeys: Array.isArray(json) ? -1 : Object.keys(json as object).length, lineOf: null };
}

/** The items of an NDJSON body, from its lines (split at each line feed). */
function ndjsonItems(lines: Iterable<string>, limits: BatchLimits, deadline: Deadline): BodyItems | BatchProblem {
  const items: BodyItem[] = [];
  const lineOf: number[] = [];
  let parsed = 0;
  let n = -1;
  for (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    if (deadline.passed(n)) return { code: 'tooSlow', ms: deadline.ms };
    // Counted before parsing: a body of too many lines is refused without parsing them all.
    if (items.length >= limits.maxReports) return { items: [...items, { ok: false, reason: 'over the limit' }], topKeys: -1, lineOf: null };
    lineOf.push(n);
    try {
      items.push({ ok: true, value: JSON.parse(line) });
      parsed++;
    } catch {
      items.push({ ok: false, reason: 'this line is not valid JSON' });
    }
  }
  if (items.length > 0 && parsed === 0) return { code: 'invalidJson', detail: 'No line of the body is valid JSON.' };
  return { items, topKeys: -1, lineOf };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
