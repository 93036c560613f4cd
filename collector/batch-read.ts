// Reading a posted body's reports within bounds: a UTF-8 JSON body a report at a time (the spans of
// collector/session-report-spans.ts), NDJSON a line at a time, anything else whole with JSON.parse; nesting
// deeper than MAX_NESTING is refused before anything is parsed, and a batch's time is bounded
// between reports. What the reports hold is collector/batch.ts's and report-schema.ts's to check.
import { isUtf8 } from 'node:buffer';
import { lineSpans, MAX_NESTING, nestingExceeds, reportSpans, type ReportSpans } from './session-report-spans.ts';

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

export type BatchProblem =
  | { code: 'tooLarge'; detail: string }
  | { code: 'unreadableBody'; detail: string }
  | { code: 'invalidJson'; detail: string }
  | { code: 'tooManyReports'; max: number }
  | { code: 'tooDeep'; max: number }
  | { code: 'tooSlow'; ms: number }
  | { code: 'foreignStream'; index: number }
  | { code: 'allRejected'; rejected: Rejection[] };

/** A clock that says when a batch has used up its time (checked every few reports). */
export class Deadline {
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
export type BodyItem = { ok: true; value: unknown } | { ok: false; reason: string };

// A byte order mark is kept, as Buffer#toString keeps it (and JSON.parse refuses it).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** A body's reports as JSON.parse reads them, and where each lies in its bytes when that can be told for sure. */
export interface BodyReports {
  items: BodyItem[];
  spans: ReportSpans | null;
}

/**
 * The reports of a body. A UTF-8 body is read a report at a time: each report's bytes decoded and
 * parsed on their own (an NDJSON line, or an element of the reports' array, found by
 * collector/session-report-spans.ts), which gives the values the whole body's text gives, without making
 * that text (a string of the body's size, 370 KiB for 500 reports: V8 keeps such strings in its
 * large-object space, and making one costs as much as decoding the whole body). A JSON body whose
 * reports cannot be told apart for sure, or whose pieces are not all JSON, or one that is not
 * UTF-8, is read whole, as it always was; its errors are told from that reading.
 */
export function readReports(body: Uint8Array, ndjson: boolean, limits: BatchLimits, deadline: Deadline): BodyReports | BatchProblem {
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
