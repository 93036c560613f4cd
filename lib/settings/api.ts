// Settings of the API: where it listens, its deadlines and limits against abuse, token lifetimes,
// and its own DuckDB and caches (entries of the settings table, lib/settings/table.ts).
import { z } from 'zod';
import { setting } from './define.ts';
import { lifetime, memorySize, metricsListener, mibToBytes, nonNegativeInt, nonNegativeNumber, port, positiveInt, positiveNumber, secondsToMs, text, timerSeconds } from './values.ts';

const LISTENER = {
  PORT: setting({
    schema: port.default(3000),
    doc: 'where the API listens',
    at: 'api.port',
    flags: {
      serve: { flag: '--port <port>', help: 'port ({env}, default {default}; 0 picks a free one)' },
      start: { flag: '--port <port>', help: 'API port' },
    },
  }),
  HOST: setting({
    schema: text.default('127.0.0.1'),
    doc: "the API's interface (and a collector's, unless `COLLECTOR_HOST` says)",
    at: 'api.host',
    flags: { serve: { flag: '--host <host>', help: 'interface' }, start: { flag: '--host <host>', help: 'API interface' } },
  }),
  METRICS_PORT: setting({
    schema: port.optional(),
    doc: 'a token-less `GET /metrics` listener of the API; without it only operator tokens read `/metrics` ([docs/operations.md](docs/operations.md#metrics))',
    at: 'api.metrics',
    as: metricsListener,
    flags: {
      serve: {
        flag: '--metrics-port <port>',
        help: 'also serve GET /metrics without a token on this port, on METRICS_HOST (default 127.0.0.1); without it only operator tokens read /metrics',
      },
    },
  }),
  METRICS_HOST: setting({ schema: text.default('127.0.0.1'), doc: "interface of the metrics listeners (API's, workers', collectors')", at: 'metricsHost' }),
};

// Deadlines and limits against abuse (docs/operations.md, "Limits").
const LIMITS = {
  API_QUERY_TIMEOUT_SECONDS: setting({
    schema: timerSeconds.default(15),
    doc: 'DuckDB work of one request (on-demand series, export start) is cancelled after this',
    at: 'api.queryTimeoutMs',
    as: secondsToMs,
  }),
  API_REQUEST_TIMEOUT_SECONDS: setting({
    schema: timerSeconds.default(30),
    doc: 'receiving one whole request (408 and the connection closed after it)',
    at: 'api.requestTimeoutMs',
    as: secondsToMs,
  }),
  API_HEADERS_TIMEOUT_SECONDS: setting({
    schema: timerSeconds.default(20),
    doc: "receiving a request's headers (408 and the connection closed after it)",
    at: 'api.headersTimeoutMs',
    as: secondsToMs,
  }),
  SNAPSHOT_POLL_SECONDS: setting({ schema: timerSeconds.default(2), doc: 'how often the API checks CURRENT besides watching it', at: 'api.snapshotPollMs', as: secondsToMs }),
  REVOCATION_POLL_SECONDS: setting({
    schema: timerSeconds.default(1),
    doc: 'how often the deny list, the ingest keys and the tenant list are read again (a revocation takes this long at most)',
    at: ['api.revocationPollMs', 'collector.revocationPollMs'],
    as: secondsToMs,
  }),
  API_MAX_CONNECTIONS: setting({ schema: positiveInt.default(1000), doc: 'open connections at once; beyond it new ones are closed at once', at: 'api.maxConnections' }),
  API_DUCKDB_MAX_QUEUED: setting({
    schema: positiveInt.default(32),
    doc: "calls of requests' DuckDB work that may wait for a slot; 503 `busy` beyond",
    at: 'api.duckdbMaxQueued',
  }),
  API_EXPORTS_MAX: setting({ schema: positiveInt.default(4), doc: 'exports running at once in the process (429 beyond)', at: 'api.exports.max' }),
  API_EXPORTS_PER_TENANT: setting({ schema: positiveInt.default(2), doc: 'exports running at once per tenant (429 beyond)', at: 'api.exports.perTenant' }),
  API_EXPORT_DUCKDB_SLOTS: setting({ schema: positiveInt.default(1), doc: 'DuckDB slots of the export pool (apart from the shared pool)', at: 'api.exports.duckdbSlots' }),
  API_EXPORT_DAY_TIMEOUT_SECONDS: setting({
    schema: timerSeconds.default(60),
    doc: "each DuckDB call of an export (one slice's query) is interrupted after this",
    at: 'api.exports.dayTimeoutMs',
    as: secondsToMs,
  }),
  API_EXPORT_SLICE_MB: setting({
    schema: positiveNumber.default(4),
    doc: 'landed megabytes of a day that one export query reads at most (larger days are cut in hours)',
    at: 'api.exports.sliceBytes',
    as: mibToBytes,
  }),
  API_ONDEMAND_MAX: setting({ schema: positiveInt.default(8), doc: 'on-demand series computed at once in the process (503 `busy` beyond)', at: 'api.onDemand.max' }),
  API_ONDEMAND_PER_TENANT: setting({ schema: positiveInt.default(2), doc: 'on-demand series computed at once per tenant (429 beyond)', at: 'api.onDemand.perTenant' }),
};

// Lifetimes of issued tokens (`token --ttl`): the default and the most allowed.
const TOKENS = {
  TOKEN_TENANT_TTL_DEFAULT: setting({ schema: lifetime.default('30d'), doc: 'lifetime of a tenant token when `token --ttl` does not say', at: 'tokens.tenant.defaultTtl' }),
  TOKEN_TENANT_TTL_MAX: setting({ schema: lifetime.default('90d'), doc: 'the longest `token --ttl` of a tenant token', at: 'tokens.tenant.maxTtl' }),
  TOKEN_OPERATOR_TTL_DEFAULT: setting({ schema: lifetime.default('1d'), doc: 'lifetime of an operator token when `token --ttl` does not say', at: 'tokens.operator.defaultTtl' }),
  TOKEN_OPERATOR_TTL_MAX: setting({ schema: lifetime.default('30d'), doc: 'the longest `token --ttl` of an operator token', at: 'tokens.operator.maxTtl' }),
};

// The API's own DuckDB and caches: sized for a server whose memory must not grow with history,
// apart from the jobs' (DUCKDB_*), which crunch whole partitions.
const RESOURCES = {
  API_DUCKDB_THREADS: setting({ schema: positiveInt.default(1), doc: 'DuckDB threads of the API process (its queries are small)', at: 'api.duckdb.threads' }),
  API_DUCKDB_MEMORY_LIMIT: setting({
    schema: memorySize.default('192MB'),
    doc: "DuckDB memory limit of the API's big work (on-demand sizes, pilot reports, exports, platform-wide breakdowns)",
    at: 'api.duckdb.memoryLimit',
  }),
  API_DUCKDB_SMALL_READS_MEMORY_LIMIT: setting({
    schema: memorySize.default('96MB'),
    doc: "DuckDB memory limit of the API's small reads (series, summaries, breakdowns of a customer), which run in an instance of their own beside the one of API_DUCKDB_MEMORY_LIMIT (docs/api.md)",
    at: 'api.duckdb.smallReadsMemoryLimit',
  }),
  API_DUCKDB_MAX_CONCURRENT: setting({ schema: positiveInt.default(2), doc: 'DuckDB calls in flight in the API process', at: 'api.duckdb.maxConcurrent' }),
  API_DUCKDB_ALLOCATOR_FLUSH: setting({
    schema: memorySize.default('2MB'),
    doc: "what the API's DuckDB allocator may keep of the memory a statement freed (the jobs keep 8MB); lower is less RSS and slower queries (docs/api.md)",
    at: 'api.duckdb.allocatorFlushThreshold',
  }),
  API_DUCKDB_RELEASE_IDLE_SECONDS: setting({
    // A Node timer waits at most 2^31 - 1 ms and fires at once beyond it: an hour bounds it well within.
    schema: nonNegativeNumber.max(3600, 'at most 3600 (an hour)').default(0.25),
    doc: "once the API's DuckDB has had no work for this long (at most 3600), the memory its allocator keeps of freed memory goes back to the system (0: at once); docs/api.md",
    at: 'api.duckdb.releaseIdleMs',
    as: secondsToMs,
  }),
  API_RESPONSE_CACHE_MB: setting({
    schema: nonNegativeNumber.default(32),
    doc: 'serialised telemetry responses with their ETags (one cache for every snapshot)',
    at: 'api.caches.responsesBytes',
    as: mibToBytes,
  }),
  API_MEMORY_TARGET_MB: setting({
    schema: nonNegativeNumber.default(300),
    doc: "resident memory above which the API asks V8 for a full collection (a pause of 20-40 ms) once its response cache has dropped as many bytes as it holds; 0: never (docs/api.md)",
    at: 'api.memoryTargetBytes',
    as: mibToBytes,
  }),
  API_SERIES_CACHE_MB: setting({
    schema: nonNegativeNumber.default(16),
    doc: "series rows reused across windows: each of the on-demand-size cache and billing's daily-series cache",
    at: 'api.caches.seriesBytes',
    as: mibToBytes,
  }),
  API_REPORT_CACHE_MB: setting({ schema: nonNegativeNumber.default(32), doc: 'pilot report bodies', at: 'api.caches.reportsBytes', as: mibToBytes }),
  API_REPORT_COMPOSED_MAX: setting({
    schema: nonNegativeInt.default(8),
    doc: 'composed pilot reports (objects) kept so that another format of one report skips the SQL',
    at: 'api.caches.composedReports',
  }),
  API_REPLAY_ENTRIES: setting({
    schema: nonNegativeInt.default(10_000),
    doc: 'answers remembered per token and URL, so that a repeated telemetry GET is answered before Koa and its routers (docs/api.md, "Replayed answers"); 0: off',
    at: 'api.caches.replays',
  }),
};

// The portal's sessions and live pages (docs/portal.md).
const PORTAL = {
  PORTAL_TRUST_PROXY: setting({
    schema: z.enum(['0', '1']).default('0'),
    doc: 'behind a TLS-terminating proxy: `1` trusts its `X-Forwarded-Proto: https` and marks portal cookies `Secure` (they are whenever the API itself serves TLS)',
    at: 'portal.trustProxy',
    as: (v: '0' | '1') => v === '1',
  }),
  PORTAL_SESSIONS_MAX: setting({
    schema: positiveInt.default(10_000),
    doc: 'portal sessions kept by an API process; beyond it the oldest one ends',
    at: 'portal.sessionsMax',
  }),
  PORTAL_SIGN_IN_LINK_SECONDS: setting({
    schema: positiveInt.max(3600).default(300),
    doc: 'how long the one-time sign-in link that `start` prints stays valid',
    at: 'portal.signInLinkMs',
    as: secondsToMs,
  }),
  PORTAL_SIGN_IN_FAILURES: setting({
    schema: positiveInt.default(10),
    doc: 'refused sign-ins from one address within a minute before the form answers 429 for the rest of that minute',
    at: 'portal.signInFailuresPerMinute',
  }),
  PORTAL_LIVE_PAGES_PER_TENANT: setting({
    schema: positiveInt.default(50),
    doc: "open live pages (event streams) per tenant; beyond it a page falls back to its figures' age warning (429 to the event stream)",
    at: 'portal.livePagesPerTenant',
  }),
  PORTAL_LIVE_PAGES_MAX: setting({
    schema: positiveInt.default(500),
    doc: 'open live pages (event streams) of the process',
    at: 'portal.livePagesMax',
  }),
};

export const API = { ...LISTENER, ...LIMITS, ...TOKENS, ...RESOURCES, ...PORTAL };
