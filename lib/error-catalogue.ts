// The catalogue of internal errors and of the CLI's exit codes: every error class the product
// throws (that is not an HTTP problem: those are lib/http/problem.ts, served/problems.ts and
// collector/problems.ts), with its code, the exit code a command that ends on it exits with, and
// what it means. The classes take their code from here (lib/errors.ts, InternalError), the CLI its
// exit codes (cli/runtime.ts, reportError), and docs/jobs.md its tables (`npm run docs:errors`;
// test/lib/error-catalogue.test.ts fails when one lags).

/** The exit codes of the CLI: what each means, and what an operator (or a scheduler) does about it. */
export const EXIT_CODES = {
  done: { code: 0, meaning: 'done', action: '' },
  failed: {
    code: 1,
    meaning: 'the run failed (the message says why; a Redis run vanished; CURRENT or a manifest unreadable for `reports`)',
    action: 'fix the cause, run again',
  },
  usage: {
    code: 2,
    meaning: 'bad option or refused input (an asOf ahead of the clock or not a real date); nothing was written',
    action: 'correct the command',
  },
  blockedByFutureSnapshot: {
    code: 3,
    meaning: 'the snapshot was written but not published: CURRENT has an asOf ahead of the clock',
    action: '`snapshots use <id>` or `pipeline --replace-current`',
  },
  alreadyRunning: {
    code: 4,
    meaning: 'a run of the same asOf is already running (`compact`: another compaction is running)',
    action: 'wait for it, or use another `--as-of`',
  },
  partlyFailed: {
    code: 5,
    meaning: '`reports`: some streams or customers could not be rendered; the others were published',
    action: 'read the summary, fix, run `reports` again',
  },
  nothingPublished: { code: 6, meaning: '`reports`: nothing is published yet', action: 'run `pipeline` first' },
  verificationFailed: {
    code: 7,
    meaning: '`verify-report`: a statement does not verify (unknown or expired key, bad signature) or a report file differs from it or is missing',
    action: 'read the lines marked `FAILED`: they name the file ([pilot-reports.md](pilot-reports.md#signatures))',
  },
} as const;

export type ExitName = keyof typeof EXIT_CODES;

/** Each exit code by name (EXIT.usage is 2). */
export const EXIT = Object.fromEntries(Object.entries(EXIT_CODES).map(([name, e]) => [name, e.code])) as {
  readonly [K in ExitName]: (typeof EXIT_CODES)[K]['code'];
};

export interface ErrorEntry {
  /** The class, and the module that defines it. */
  class: string;
  module: string;
  /**
   * How a CLI command that ends on it exits: an exit code's name, or 'carried' for an error that
   * carries its own (ExitError). A command may first turn it into a usage error (the entry says so).
   */
  exit: ExitName | 'carried';
  /** The HTTP problem an API route answers with when it meets it, if one does. */
  problem?: string;
  meaning: string;
}

/**
 * Every internal error kind, by code. The classes of alerts/ and portal/ are listed but do not yet
 * take their code from here (their modules are being changed elsewhere).
 */
export const INTERNAL_ERRORS = {
  user_error: { class: 'UserError', module: 'lib/errors.ts', exit: 'usage', meaning: 'a bad option or a missing input a user can act on: one line, no stack trace' },
  exit: { class: 'ExitError', module: 'lib/errors.ts', exit: 'carried', meaning: 'a command ends in a state an operator must act on, with the exit code it carries' },
  config_invalid: { class: 'ConfigError', module: 'lib/config.ts', exit: 'usage', meaning: 'a setting (environment, flag, settings file) is invalid' },
  as_of_ahead: { class: 'AsOfAheadError', module: 'lib/time.ts', exit: 'usage', meaning: 'an asOf further ahead of the clock than the allowed skew' },
  lock_busy: { class: 'LockBusyError', module: 'lib/file-lock.ts', exit: 'failed', meaning: 'a live process holds a file lock and did not release it within the wait' },
  lock_lost: { class: 'LockLostError', module: 'lib/file-lock.ts', exit: 'failed', meaning: 'a file lock was taken over by another process while held' },
  platform_config_invalid: { class: 'PlatformConfigError', module: 'config/platform.ts', exit: 'failed', meaning: 'the platform configuration file cannot be read or is invalid' },
  run_already_running: { class: 'RunAlreadyRunningError', module: 'warehouse/snapshots/run-lock.ts', exit: 'alreadyRunning', meaning: 'another rollup run of the same asOf holds the run lock' },
  generate_refused: { class: 'GenerateError', module: 'warehouse/sample/generate.ts', exit: 'failed', meaning: '`generate`: the same seed and start were generated before (nothing written)' },
  control_document_invalid: { class: 'ControlDocumentError', module: 'control/documents.ts', exit: 'failed', meaning: 'a control document (tenants, keys, origins…) is not valid JSON or fails its schema' },
  tenant_refused: { class: 'TenantError', module: 'control/tenants.ts', exit: 'failed', meaning: 'a tenant change is refused (a tenant for that customer exists already); `tenants` exits 2 on it' },
  ingest_key_refused: { class: 'IngestKeyError', module: 'control/ingest-keys.ts', exit: 'failed', meaning: 'an ingest key change is refused (no such tenant or key); `ingest-keys` exits 2 on it' },
  signing_key_invalid: { class: 'SigningKeyError', module: 'control/signing-key.ts', exit: 'failed', meaning: 'a signing key is not an EC P-256 private key in PEM or JWK form' },
  origins_version_mismatch: { class: 'VersionMismatch', module: 'control/origins.ts', exit: 'failed', problem: 'precondition_failed', meaning: 'the stored list of origins changed since it was read' },
  snapshot_unreadable: { class: 'SnapshotUnreadableError', module: 'warehouse/snapshots/snapshot-folders.ts', exit: 'failed', meaning: 'a publication file (CURRENT, PUBLISHED, a manifest) exists but cannot be read; `snapshots use` exits 2 on it' },
  query_timeout: { class: 'QueryTimeout', module: 'warehouse/duckdb/session.ts', exit: 'failed', problem: 'timeout', meaning: 'a DuckDB query was interrupted after its time limit' },
  slots_busy: { class: 'SlotsBusy', module: 'warehouse/duckdb/slots.ts', exit: 'failed', problem: 'busy', meaning: 'a bounded queue of DuckDB work is full' },
  redis_unavailable: { class: 'RedisUnavailableError', module: 'jobs/queue/connection.ts', exit: 'failed', meaning: 'Redis is missing, unreachable or refuses us' },
  run_busy: { class: 'RunBusyError', module: 'jobs/queue/enqueue.ts', exit: 'failed', meaning: 'a failed run cannot be removed to enqueue it again: some of its jobs still run' },
  wait_timeout: { class: 'WaitTimeoutError', module: 'jobs/queue/enqueue.ts', exit: 'failed', meaning: '`enqueue --wait`: the run had not finished within the timeout' },
  run_vanished: { class: 'RunVanishedError', module: 'jobs/queue/enqueue.ts', exit: 'failed', meaning: '`enqueue --wait`: the run is no longer in Redis' },
  state_missing: { class: 'StateMissingError', module: 'jobs/rollup/publish.ts', exit: 'failed', meaning: 'a partition state the run needs is missing (its job did not finish, or it was removed)' },
  build_gone: { class: 'BuildGoneError', module: 'jobs/rollup/publish-once.ts', exit: 'failed', meaning: "the run's build folder is gone and no trace of its publication was found" },
  unknown_customer: { class: 'UnknownCustomerError', module: 'jobs/pilot-reports/run.ts', exit: 'failed', meaning: '`reports --customer`: the snapshot holds no data for that customer; `reports` exits 2 on it' },
  spool_busy: { class: 'SpoolBusyError', module: 'collector/spool-folder.ts', exit: 'failed', meaning: "the collector's spool folder is open in this process or belongs to another host" },
  token_refused: { class: 'TokenError', module: 'api/tokens.ts', exit: 'failed', meaning: 'a token lifetime is not valid; `token` exits 2 on it' },
  token_invalid: { class: 'TokenVerifyError', module: 'api/tokens.ts', exit: 'failed', problem: 'invalid_token', meaning: 'a bearer token does not verify (expired, bad signature, invalid claims)' },
  client_gone: { class: 'ClientGone', module: 'served/request-signal.ts', exit: 'failed', meaning: 'the client closed the connection before its answer' },
  deadline_passed: { class: 'DeadlinePassed', module: 'served/request-signal.ts', exit: 'failed', problem: 'timeout', meaning: "no answer within the request's deadline" },
  report_link_invalid: { class: 'IndexLinkError', module: 'pilot/render.ts', exit: 'failed', meaning: "a link of a customer's report index is not a relative '/'-separated path" },
  statement_invalid: { class: 'StatementError', module: 'pilot/statement.ts', exit: 'failed', meaning: 'a report JSON cannot be signed: not JSON, or it lacks what a statement needs' },
  statement_input_invalid: { class: 'StatementInputError', module: 'pilot/statement-files.ts', exit: 'failed', meaning: '`verify-report`: a path is missing or is not a report nor a statement; `verify-report` exits 2 on it' },
  replay_refused: { class: 'ReplayError', module: 'sdk/replay.ts', exit: 'failed', meaning: '`generate --post`: the collector refused a batch, or did not answer after every retry' },
  alert_rule_limit: { class: 'RuleLimitReached', module: 'alerts/rules-store.ts', exit: 'failed', problem: 'too_many_alert_rules', meaning: 'a tenant has as many alert rules as allowed' },
  webhook_target_forbidden: { class: 'TargetForbidden', module: 'alerts/webhooks/target-check.ts', exit: 'failed', problem: 'webhook_target_forbidden', meaning: 'a webhook host does not resolve, or resolves to a private address' },
  webhook_limit: { class: 'EndpointLimitReached', module: 'alerts/webhooks/endpoints-store.ts', exit: 'failed', problem: 'too_many_webhooks', meaning: 'a tenant has as many webhook endpoints as allowed' },
  api_refusal: { class: 'ApiRefusal', module: 'portal/api-client.ts', exit: 'failed', meaning: "the portal's call to the API was answered with a problem (carried to its error page)" },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof INTERNAL_ERRORS;

/** The exit code of an error code ('carried': the error's own, given as `carried`). */
export function exitCodeOfKind(code: ErrorCode, carried: number = EXIT.failed): number {
  const exit = (INTERNAL_ERRORS[code] as ErrorEntry).exit;
  return exit === 'carried' ? carried : EXIT[exit];
}
