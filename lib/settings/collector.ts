// Settings of the collector of SDK reports: where it listens, its spool, and the limits of what a
// request and a key may cost (entries of the settings table, lib/settings/table.ts; the why of each
// default is in docs/sdk-ingest.md).
import os from 'node:os';
import path from 'node:path';
import { setting } from './define.ts';
import { memorySize, metricsListener, nonNegativeInt, nonNegativeNumber, port, positiveInt, positiveNumber, secondsToMs, text, timerSeconds } from './values.ts';

const LISTENER = {
  COLLECTOR_PORT: setting({
    schema: port.default(3001),
    doc: 'where a collector listens',
    at: 'collector.port',
    flags: { collect: { flag: '--port <port>', help: 'port' }, start: { flag: '--collector-port <port>', help: 'collector port' } },
  }),
  COLLECTOR_HOST: setting({
    schema: text.optional(),
    fallback: 'HOST',
    doc: "a collector's interface",
    at: 'collector.host',
    flags: { collect: { flag: '--host <host>', help: 'interface' } },
  }),
  COLLECTOR_SPOOL_DIR: setting({
    schema: text.optional(),
    shown: '`<warehouse>/spool/<host>-<port>`',
    doc: "this collector's own spool folder",
    at: 'collector.spoolDir',
    as: (dir) => (dir === undefined ? null : path.resolve(dir)),
    flags: { collect: { flag: '--spool <dir>', help: "this collector's own spool folder" } },
  }),
  COLLECTOR_METRICS_PORT: setting({
    schema: port.optional(),
    doc: "a collector's `GET /metrics` listener, on `METRICS_HOST`",
    at: 'collector.metrics',
    as: metricsListener,
    flags: { collect: { flag: '--metrics-port <port>', help: 'serve GET /metrics (Prometheus) on this port of METRICS_HOST ({env}; default: none)' } },
  }),
  COLLECTOR_REQUEST_TIMEOUT_SECONDS: setting({ schema: timerSeconds.default(30), doc: 'receiving one request', at: 'collector.requestTimeoutMs', as: secondsToMs }),
};

// What one request may hold, and what one ingest key or client address may cost per second.
const LIMITS = {
  COLLECTOR_MAX_BODY_BYTES: setting({
    schema: positiveInt.default(2 ** 20),
    doc: 'largest request body on the wire (413 beyond)',
    at: 'collector.maxBodyBytes',
  }),
  COLLECTOR_MAX_INFLATED_BYTES: setting({
    schema: positiveInt.default(8 * 2 ** 20),
    doc: 'largest body once gunzipped: inflating stops there (413)',
    at: 'collector.maxInflatedBytes',
  }),
  COLLECTOR_MAX_REPORTS: setting({ schema: positiveInt.default(2000), doc: 'most reports in one request (413 beyond)', at: 'collector.maxReports' }),
  COLLECTOR_MAX_FUTURE_SECONDS: setting({
    schema: nonNegativeInt.default(600),
    doc: "a report's `ts` may be at most this far ahead of the collector's clock",
    at: 'collector.maxFutureMs',
    as: secondsToMs,
  }),
  COLLECTOR_LATE_HORIZON_DAYS: setting({
    schema: positiveNumber.default(35),
    doc: "a report's `ts` may be at most this old (the late-data horizon)",
    at: 'collector.lateHorizonMs',
    as: (days) => Math.round(days * 86_400_000),
  }),
  COLLECTOR_RATE_LIMIT_REPORTS_PER_SECOND: setting({
    schema: nonNegativeNumber.default(20_000),
    doc: 'reports per second one ingest key may send to one collector process (429 beyond); 0: no limit',
    at: 'collector.rateLimitPerKey',
  }),
  COLLECTOR_INFLATED_BYTES_PER_KEY_PER_SECOND: setting({
    schema: nonNegativeNumber.default(64 * 2 ** 20),
    doc: 'bytes per second (once inflated) one ingest key may have checked by one collector process; 0: no limit',
    at: 'collector.inflatedBytesPerKey',
  }),
  COLLECTOR_CHECK_MS_PER_KEY_PER_SECOND: setting({
    schema: nonNegativeNumber.default(1000),
    doc: 'milliseconds per second of batch checking (inflate, parse, checks) one ingest key may use; 0: no limit',
    at: 'collector.checkMsPerKey',
  }),
  COLLECTOR_MAX_CHECK_MS: setting({ schema: positiveInt.default(1000), doc: 'time one batch may take to be read and checked (413 `too_costly` beyond)', at: 'collector.maxCheckMs' }),
  COLLECTOR_KEY_FAILURES_PER_SECOND: setting({
    schema: nonNegativeNumber.default(5),
    doc: "refused ingest keys per second one client address may present (bursts of 10 s' worth); 429 beyond, before any key is looked at; 0: no limit",
    at: 'collector.keyFailuresPerAddress',
  }),
};

// The spool, landed as Parquet by the flusher, whose DuckDB is sized on its own: it is what bounds
// the collector's memory beyond the requests in flight (docs/operations.md).
const LANDING = {
  COLLECTOR_FLUSH_SECONDS: setting({
    schema: timerSeconds.default(2),
    doc: 'the spool is landed as Parquet when its open segment is this old… (live by default; `120` for fewer, larger files: docs/operations.md)',
    at: 'collector.flushIntervalMs',
    as: secondsToMs,
  }),
  COLLECTOR_FLUSH_REPORTS: setting({ schema: positiveInt.default(200_000), doc: '…or holds this many reports, whichever comes first', at: 'collector.flushReports' }),
  COLLECTOR_SPOOL_MAX_BYTES: setting({
    schema: positiveInt.default(2 * 2 ** 30),
    doc: 'unlanded spool beyond which requests get 503 with `Retry-After`',
    at: 'collector.spoolMaxBytes',
  }),
  COLLECTOR_DUCKDB_MEMORY_LIMIT: setting({
    schema: memorySize.default('512MB'),
    doc: "the flusher's DuckDB memory (it spills beyond); with the request limits, what bounds the collector's memory",
    at: 'collector.duckdbMemoryLimit',
  }),
};

const PROCESS = {
  COLLECTOR_WORKERS: setting({
    schema: nonNegativeInt.max(64, 'at most 64').default(() => os.availableParallelism()),
    shown: 'cores',
    doc: 'worker threads that check posted batches (docs/sdk-ingest.md, "Batch workers"); 0: on the event loop\'s thread',
    at: 'collector.workers',
  }),
  COLLECTOR_HEAP_GROWING_PERCENT: setting({
    schema: nonNegativeInt.max(1000, 'at most 1000').default(300),
    doc: 'how much V8\'s old generation grows between full collections in a `collect` process (docs/operations.md, "Memory of a collector"); 0: V8\'s own rule',
    at: 'collector.heapGrowingPercent',
  }),
};

export const COLLECTOR = { ...LISTENER, ...LIMITS, ...LANDING, ...PROCESS };
