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
  const start = new Int32Array(capacity);
  const end = new Int32Array(capacity);
  // Keys are counted for the elements that are objects (objectEnd); -1, which no report's count
  // equals, for any other element (JSON.parse read no report there: checkReport refuses it).
  const keys = new Int32Array(capacity).fill(-1);
  const multiline = new Uint8Array(capacity);
  const n = body.length;
  let i = 0;
  while (i < n && isSpace(body[i]!)) i++;
  if (i >= n) return null;
  const wrapped = body[i] === OPEN_OBJECT;
  if (!wrapped && body[i] !== OPEN_ARRAY) return null;

  let depth = 0; // containers open
  let arrayDepth = -1; // depth inside the reports array, once entered
  let inArray = false;
  let done = false; // the reports array was closed
  let topKeys = 0;
  let reportsKeys = 0;
  let keyStart = -1; // the last string at depth 1 of the wrapper: a key candidate
  let keyEnd = -1;
  let reportsValueNext = false; // a ':' after the "reports" key was just read
  let element = 0;
  let elementStart = -1;
  let lastToken = -1; // the last byte of the last token read
  let arrayOpen = -1;
  let arrayClose = -1;

  for (; i < n; i++) {
    const c = body[i]!;
    if (isSpace(c)) continue;
    if (c === QUOTE) {
      const j = stringEnd(body, i);
      if (j < 0) return null;
      if (inArray && depth === arrayDepth) {
        if (elementStart >= 0) return null; // two values without a comma: not what JSON.parse read
        elementStart = i;
      }
      if (wrapped && depth === 1) {
        keyStart = i + 1;
        keyEnd = j;
      }
      reportsValueNext = false;
      i = j;
      lastToken = j;
      continue;
    }
    if (inArray && depth === arrayDepth) {
      if (c === COMMA || c === CLOSE_ARRAY) {
        if (elementStart >= 0) {
          if (element >= capacity) return null;
          start[element] = elementStart;
          end[element] = lastToken + 1;
          element++;
          elementStart = -1;
        } else if (c === COMMA || element > 0) {
          return null; // an empty element: not what JSON.parse read
        }
        if (c === CLOSE_ARRAY) {
          arrayClose = i;
          inArray = false;
          done = true;
          depth--;
        }
        lastToken = i;
        continue;
      }
      if (elementStart < 0 && c === OPEN_OBJECT) {
        // A report (the usual element): read to its closing brace in one tight loop.
        const close = objectEnd(body, i, MAX_NESTING - depth);
        if (close < 0) return null;
        elementStart = i;
        keys[element] = scannedKeys;
        if (scannedLineBreak) multiline[element] = 1;
        reportsValueNext = false;
        i = close;
        lastToken = close;
        continue;
      }
      if (elementStart < 0) elementStart = i;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) return null;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_NESTING) return null;
      if (c === OPEN_ARRAY && !done && !inArray && ((!wrapped && depth === 1) || (wrapped && depth === 2 && reportsValueNext))) {
        inArray = true;
        arrayDepth = depth;
        arrayOpen = i;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COLON) {
      if (wrapped && depth === 1) {
        topKeys++;
        if (isReportsKey(body, keyStart, keyEnd)) {
          reportsKeys++;
          reportsValueNext = true;
          lastToken = i;
          continue;
        }
      }
    }
    reportsValueNext = false;
    lastToken = i;
  }
  if (!done || reportsKeys > 1 || depth !== 0) return null;
  return { count: element, start, end, keys, multiline, topKeys: wrapped ? topKeys : -1, arrayOpen, arrayClose };
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
