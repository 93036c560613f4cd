// Where each report of a posted body lies in its bytes, so that the spool can keep a report's own
// text rather than serialise it again (JSON.stringify cost more per report than parsing it). The
// body has been parsed by JSON.parse already and each report validated; this only finds the
// reports (the elements of a top-level array or of the array under a top-level "reports" key, or
// the lines of an NDJSON body) and, for each, how many object keys its text holds. A caller keeps a
// report's text only when that count equals the keys of the parsed report: JSON.parse keeps the
// last of duplicate keys and DuckDB's reader the first, so a text with a duplicate key (written
// plainly or with escapes) must never reach the spool as it came. Anything unexpected makes the
// report (or the whole body) fall back to serialising.

/**
 * Most containers open at once in a body: a report needs two levels (the wrapper's array and the
 * report), its maps a third, the `{"reports": ...}` wrapper a fourth; the rest is room for unknown
 * fields, which are ignored.
 */
export const MAX_NESTING = 8;

/** The reports of a body: report i is bytes [start[i], end[i]), holding keys[i] keys. */
export interface ReportSpans {
  /** How many reports: the arrays below may be longer. */
  count: number;
  start: Int32Array;
  end: Int32Array;
  keys: Int32Array;
  /** Whether report i has a line break between its tokens (a spool line must not). */
  multiline: Uint8Array;
  /** Keys of the top-level object (the wrapper), or -1 when the body is an array. */
  topKeys: number;
  /** Where the reports' array opens and closes (`[` and `]`); -1 for NDJSON. */
  arrayOpen: number;
  arrayClose: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
/** `"reports"`, as the key's bytes between its quotes. */
const REPORTS = [0x72, 0x65, 0x70, 0x6f, 0x72, 0x74, 0x73];

/**
 * The spans of the reports of `body` (JSON text: an array, or an object holding the array under
 * "reports"), at most `capacity` of them, or null when they cannot be told for sure (or there are
 * more). Only the body's structure around the reports is read: whether the text between them, and
 * each of them, is JSON is for JSON.parse to say.
 */
export function reportSpans(body: Uint8Array, capacity: number): ReportSpans | null {
  const first = firstToken(body);
  if (first < 0) return null;
  const scan = newScan(body, capacity, body[first] === OPEN_OBJECT);
  if (!scan.wrapped && body[first] !== OPEN_ARRAY) return null;
  for (let i = first; i < body.length; i++) {
    i = scanToken(scan, i);
    if (i === FAIL) return null;
  }
  return finishedSpans(scan);
}

/** Where reportSpans is in a body: the containers around it and the reports found so far. */
interface Scan {
  body: Uint8Array;
  capacity: number;
  wrapped: boolean;
  start: Int32Array;
  end: Int32Array;
  keys: Int32Array;
  multiline: Uint8Array;
  /** Containers open. */
  depth: number;
  /** Depth inside the reports array, once entered. */
  arrayDepth: number;
  inArray: boolean;
  /** The reports array was closed. */
  done: boolean;
  topKeys: number;
  reportsKeys: number;
  /** The last string at depth 1 of the wrapper: a key candidate. */
  keyStart: number;
  keyEnd: number;
  /** A ':' after the "reports" key was just read. */
  reportsValueNext: boolean;
  element: number;
  elementStart: number;
  /** The last byte of the last token read. */
  lastToken: number;
  arrayOpen: number;
  arrayClose: number;
}

/** What a step returns when the reports cannot be told for sure; otherwise the last byte it read. */
const FAIL = -1;

function firstToken(body: Uint8Array): number {
  let i = 0;
  while (i < body.length && isSpace(body[i]!)) i++;
  return i < body.length ? i : -1;
}

function newScan(body: Uint8Array, capacity: number, wrapped: boolean): Scan {
  return {
    body,
    capacity,
    wrapped,
    start: new Int32Array(capacity),
    end: new Int32Array(capacity),
    // Keys are counted for the elements that are objects (objectEnd); -1, which no report's count
    // equals, for any other element (JSON.parse read no report there: checkReport refuses it).
    keys: new Int32Array(capacity).fill(-1),
    multiline: new Uint8Array(capacity),
    depth: 0,
    arrayDepth: -1,
    inArray: false,
    done: false,
    topKeys: 0,
    reportsKeys: 0,
    keyStart: -1,
    keyEnd: -1,
    reportsValueNext: false,
    element: 0,
    elementStart: -1,
    lastToken: -1,
    arrayOpen: -1,
    arrayClose: -1,
  };
}

/** Reads the token at `i`: a string, a byte of the reports array or a byte of the structure. */
function scanToken(scan: Scan, i: number): number {
  const c = scan.body[i]!;
  if (isSpace(c)) return i;
  if (c === QUOTE) return scanString(scan, i);
  if (scan.inArray && scan.depth === scan.arrayDepth) return scanInReportsArray(scan, i, c);
  return scanStructure(scan, i, c);
}

function scanString(scan: Scan, i: number): number {
  const j = stringEnd(scan.body, i);
  if (j < 0) return FAIL;
  if (scan.inArray && scan.depth === scan.arrayDepth) {
    if (scan.elementStart >= 0) return FAIL; // two values without a comma: not what JSON.parse read
    scan.elementStart = i;
  }
  if (scan.wrapped && scan.depth === 1) {
    scan.keyStart = i + 1;
    scan.keyEnd = j;
  }
  scan.reportsValueNext = false;
  scan.lastToken = j;
  return j;
}

/** A byte directly inside the reports array: an element's end, a report, or another element's start. */
function scanInReportsArray(scan: Scan, i: number, c: number): number {
  if (c === COMMA || c === CLOSE_ARRAY) return endElement(scan, i, c);
  if (scan.elementStart < 0 && c === OPEN_OBJECT) return scanReport(scan, i);
  if (scan.elementStart < 0) scan.elementStart = i;
  else if (c === OPEN_OBJECT || c === OPEN_ARRAY) return FAIL;
  return scanStructure(scan, i, c);
}

/** A comma or the array's closing bracket: records the element it ends. */
function endElement(scan: Scan, i: number, c: number): number {
  if (scan.elementStart >= 0) {
    if (scan.element >= scan.capacity) return FAIL;
    scan.start[scan.element] = scan.elementStart;
    scan.end[scan.element] = scan.lastToken + 1;
    scan.element++;
    scan.elementStart = -1;
  } else if (c === COMMA || scan.element > 0) {
    return FAIL; // an empty element: not what JSON.parse read
  }
  if (c === CLOSE_ARRAY) {
    scan.arrayClose = i;
    scan.inArray = false;
    scan.done = true;
    scan.depth--;
  }
  scan.lastToken = i;
  return i;
}

/** A report (the usual element): read to its closing brace in one tight loop. */
function scanReport(scan: Scan, i: number): number {
  const close = objectEnd(scan.body, i, MAX_NESTING - scan.depth);
  if (close < 0) return FAIL;
  scan.elementStart = i;
  scan.keys[scan.element] = scannedKeys;
  if (scannedLineBreak) scan.multiline[scan.element] = 1;
  scan.reportsValueNext = false;
  scan.lastToken = close;
  return close;
}

/** A bracket, a brace or a colon outside the reports: depth, the reports array's opening, the wrapper's keys. */
function scanStructure(scan: Scan, i: number, c: number): number {
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    if (!openContainer(scan, i, c)) return FAIL;
  } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
    scan.depth--;
  } else if (c === COLON && scan.wrapped && scan.depth === 1 && readTopKey(scan)) {
    scan.lastToken = i;
    return i;
  }
  scan.reportsValueNext = false;
  scan.lastToken = i;
  return i;
}

function openContainer(scan: Scan, i: number, c: number): boolean {
  if (++scan.depth > MAX_NESTING) return false;
  if (c === OPEN_ARRAY && !scan.done && !scan.inArray && opensReports(scan)) {
    scan.inArray = true;
    scan.arrayDepth = scan.depth;
    scan.arrayOpen = i;
  }
  return true;
}

/** Whether an array opening at the current depth is the reports array. */
function opensReports(scan: Scan): boolean {
  return scan.wrapped ? scan.depth === 2 && scan.reportsValueNext : scan.depth === 1;
}

/** Counts a key of the wrapper; true when it is "reports" (its value comes next). */
function readTopKey(scan: Scan): boolean {
  scan.topKeys++;
  if (!isReportsKey(scan.body, scan.keyStart, scan.keyEnd)) return false;
  scan.reportsKeys++;
  scan.reportsValueNext = true;
  return true;
}

function finishedSpans(scan: Scan): ReportSpans | null {
  if (!scan.done || scan.reportsKeys > 1 || scan.depth !== 0) return null;
  const { element: count, start, end, keys, multiline, wrapped, topKeys, arrayOpen, arrayClose } = scan;
  return { count, start, end, keys, multiline, topKeys: wrapped ? topKeys : -1, arrayOpen, arrayClose };
}

/**
 * The spans of the reports of an NDJSON body: report k is the line `lineOf[k]` (0-based, lines
 * split at each line feed, as the body's text was), without the JSON whitespace around it. Its
 * keys are counted when it is one object filling the line; otherwise they are -1, which no
 * report's count equals, so it is serialised.
 */
export function lineSpans(body: Uint8Array, lineOf: readonly number[]): ReportSpans {
  const count = lineOf.length;
  const start = new Int32Array(count);
  const end = new Int32Array(count);
  const keys = new Int32Array(count).fill(-1);
  const multiline = new Uint8Array(count);
  let line = 0;
  let at = 0; // where `line` starts
  for (let k = 0; k < count; k++) {
    while (line < lineOf[k]!) {
      const lf = body.indexOf(LF, at);
      if (lf < 0) return { count, start, end, keys: keys.fill(-1), multiline, topKeys: -1, arrayOpen: -1, arrayClose: -1 };
      at = lf + 1;
      line++;
    }
    const lf = body.indexOf(LF, at);
    let from = at;
    let to = lf < 0 ? body.length : lf;
    while (from < to && isSpace(body[from]!)) from++;
    while (to > from && isSpace(body[to - 1]!)) to--;
    start[k] = from;
    end[k] = to;
    if (body[from] === OPEN_OBJECT && objectEnd(body, from, MAX_NESTING) === to - 1) {
      keys[k] = scannedKeys;
      if (scannedLineBreak) multiline[k] = 1;
    }
  }
  return { count, start, end, keys, multiline, topKeys: -1, arrayOpen: -1, arrayClose: -1 };
}

/** What objectEnd found in the object it read: its keys (nested ones too), and a line break. */
let scannedKeys = 0;
let scannedLineBreak = false;

/** Bytes that matter inside an object: all others (digits, letters, commas, spaces...) are skipped. */
const OTHER = 0;
const IS_QUOTE = 1;
const IS_OPEN = 2;
const IS_CLOSE = 3;
const IS_COLON = 4;
const IS_LINE_BREAK = 5;
const CLASS = new Uint8Array(256);
CLASS[QUOTE] = IS_QUOTE;
CLASS[OPEN_OBJECT] = IS_OPEN;
CLASS[OPEN_ARRAY] = IS_OPEN;
CLASS[CLOSE_OBJECT] = IS_CLOSE;
CLASS[CLOSE_ARRAY] = IS_CLOSE;
CLASS[COLON] = IS_COLON;
CLASS[LF] = IS_LINE_BREAK;
CLASS[CR] = IS_LINE_BREAK;

/**
 * The index of the brace that closes the object opening at `from`, counting its keys (its colons
 * outside strings) into `scannedKeys`; -1 when the body ends first, or when containers nest more
 * than `maxDepth` deep (the object itself counts one).
 */
function objectEnd(body: Uint8Array, from: number, maxDepth: number): number {
  const n = body.length;
  let depth = 1;
  let keys = 0;
  let lineBreak = false;
  for (let j = from + 1; j < n; j++) {
    const k = CLASS[body[j]!]!;
    if (k === OTHER) continue;
    if (k === IS_QUOTE) {
      j = stringEnd(body, j);
      if (j < 0) return -1;
    } else if (k === IS_OPEN) {
      if (++depth > maxDepth) return -1;
    } else if (k === IS_CLOSE) {
      if (--depth === 0) {
        scannedKeys = keys;
        scannedLineBreak = lineBreak;
        return j;
      }
    } else if (k === IS_COLON) {
      keys++;
    } else {
      lineBreak = true;
    }
  }
  return -1;
}

/**
 * Whether containers (arrays and objects, outside strings) nest more than `max` deep anywhere in
 * `body`, the NDJSON lines of a body counted as one text. Read before JSON.parse builds anything:
 * JSON.parse takes any depth, and a few kilobytes of gzip inflate to millions of nested arrays that
 * cost it seconds and hundreds of megabytes. A report needs two levels and its maps three
 * (`{"reports": [{"bytesByPath": {...}}]}` is four).
 */
export function nestingExceeds(body: Uint8Array, max: number): boolean {
  const n = body.length;
  let depth = 0;
  for (let j = 0; j < n; j++) {
    const k = CLASS[body[j]!]!;
    if (k === OTHER || k === IS_COLON || k === IS_LINE_BREAK) continue;
    if (k === IS_QUOTE) {
      j = stringEnd(body, j);
      if (j < 0) return false;
    } else if (k === IS_OPEN) {
      if (++depth > max) return true;
    } else if (depth > 0) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opening at `from` (escapes skipped), or -1. */
function stringEnd(body: Uint8Array, from: number): number {
  const n = body.length;
  for (let j = from + 1; j < n; ) {
    const d = body[j]!;
    if (d === QUOTE) return j;
    j += d === BACKSLASH ? 2 : 1;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === LF || c === CR;
}

function isReportsKey(body: Uint8Array, from: number, to: number): boolean {
  if (to - from !== REPORTS.length) return false;
  for (let k = 0; k < REPORTS.length; k++) if (body[from + k] !== REPORTS[k]) return false;
  return true;
}
