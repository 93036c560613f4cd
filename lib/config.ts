// The one place that reads the environment: validates it once against the settings table
// (lib/settings/table.ts) and hands out the typed config. Command-line flags come over it.
import { z } from 'zod';
import { SETTING_ENTRIES as entries, type AppConfig, type SettingValues } from './settings/table.ts';
import { InternalError } from './errors.ts';

export { DEFAULT_PLATFORM_CONFIG_FILE } from './settings/core.ts';
export type { AppConfig, SettingValues };

export type LogLevel = AppConfig['logLevel'];
export type CollectorConfig = AppConfig['collector'];
export type RedisConfig = AppConfig['redis'];

/** Values set over the environment (command-line flags), or under it, by setting name. */
export type SettingOverrides = Partial<SettingValues>;

export interface ConfigSources {
  /** The environment: process.env unless given. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values that win over the environment (command-line flags, checked by their schemas). */
  overrides?: SettingOverrides;
  /** Defaults of this process, under the environment (a command logs at warn, a service at info). */
  defaults?: SettingOverrides;
}

export class ConfigError extends InternalError {
  override name = 'ConfigError';
  override readonly errorCode = 'config_invalid';
}

const EnvSchema = z.object(Object.fromEntries(entries.map(([name, spec]) => [name, spec.schema])));

export function loadConfig(sources: ConfigSources = {}): AppConfig {
  const fromEnv = withFallbacks(parseEnv({ ...defined(sources.defaults), ...defined(sources.env ?? process.env) }));
  return place({ ...fromEnv, ...defined(sources.overrides) });
}

function parseEnv(env: Record<string, unknown>): Record<string, unknown> {
  const parsed = EnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new ConfigError(`invalid environment: ${issues}`);
}

/** A setting not set in the environment takes its fallback's value there (COLLECTOR_HOST: HOST's). */
function withFallbacks(values: Record<string, unknown>): Record<string, unknown> {
  const out = { ...values };
  for (const [name, spec] of entries) if (spec.fallback !== undefined) out[name] ??= values[spec.fallback];
  return out;
}

/** The typed config: every setting's value, converted, at each of its places. */
function place(values: Record<string, unknown>): AppConfig {
  const config: Record<string, unknown> = {};
  for (const [name, spec] of entries) {
    const value = converted(spec, values[name], values);
    for (const at of typeof spec.at === 'string' ? [spec.at] : spec.at) setPath(config, at, value);
  }
  return config as AppConfig;
}

/** A setting's value as the config holds it; a conversion that refuses it (settings that exclude each other) is a ConfigError. */
function converted(spec: (typeof entries)[number][1], value: unknown, values: Record<string, unknown>): unknown {
  if (!spec.as) return value;
  try {
    return spec.as(value, values);
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err));
  }
}

function setPath(target: Record<string, unknown>, at: string, value: unknown): void {
  const keys = at.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[keys.at(-1)!] = value;
}

function defined(values: object | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([, v]) => v !== undefined));
}

/**
 * For tests and benchmarks only, never set in production: text mixed into the hash of the state
 * code (`P2PTEL_TEST_STATE_CODE_SALT`) or of the state layout (`P2PTEL_TEST_STATE_LAYOUT_SALT`),
 * to simulate a deployment that changes a state's SQL or what its files hold
 * (warehouse/state-store.ts). Read at each call, so that a test can change it between runs.
 */
export function testStateSalts(): { code: string; layout: string } {
  return { code: process.env['P2PTEL_TEST_STATE_CODE_SALT'] ?? '', layout: process.env['P2PTEL_TEST_STATE_LAYOUT_SALT'] ?? '' };
}

/** A test setting that is a positive whole number (read at each call), or undefined when unset or not one. */
function testPositiveInt(name: string): number | undefined {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : undefined;
}

/**
 * For tests only, never set in production: the session-class rows of one statement of a
 * snapshot's summaries (`P2PTEL_TEST_SUMMARY_GROUP_ROWS`; warehouse/publish/snapshot-summaries.ts),
 * so that a small warehouse is summed in several groups and parts. Read at each call.
 */
export function testSummaryGroupRows(): number | undefined {
  return testPositiveInt('P2PTEL_TEST_SUMMARY_GROUP_ROWS');
}

/**
 * For tests and benchmarks only, never set in production: `P2PTEL_TEST_EDGE_SLOTS=off` reads the
 * hours that window edges cut in layered states report by report over the whole hour, as before
 * slot pieces (warehouse/states/window-pieces.ts layeredEdgePieces), to compare both on the same
 * warehouse. Read at each call.
 */
export function testEdgeSlotsOff(): boolean {
  return process.env['P2PTEL_TEST_EDGE_SLOTS'] === 'off';
}

/**
 * For tests only, never set in production: how a snapshot's summaries use the summary bases of
 * settled classes (`P2PTEL_TEST_SUMMARY_BASES`; warehouse/publish/summary-bases.ts): `off` makes
 * every summary from all of its classes, `<fraction>,<margin>` sets the band's extra fraction and
 * margin (`0,0`: the smallest band the percentile needs, so that a tick's changes fall outside it
 * and the summaries are made again). Read at each call.
 */
export function testSummaryBases(): { off: true } | { off: false; band?: { extraFraction: number; margin: number } } {
  const v = process.env['P2PTEL_TEST_SUMMARY_BASES'];
  if (v === 'off') return { off: true };
  const m = v ? /^([\d.]+),(\d+)$/.exec(v) : null;
  return m ? { off: false, band: { extraFraction: Number(m[1]), margin: Number(m[2]) } } : { off: false };
}

/**
 * For tests only, never set in production: the most minute pieces one statement of a layered
 * build groups for the minutes its new layer touches (`P2PTEL_TEST_TOUCHED_MINUTES_MAX_ROWS`,
 * instead of TOUCHED_MINUTES_MAX_ROWS; warehouse/states/layered-state.ts), so that a small day's
 * touched minutes are remade in several runs. Read at each call.
 */
export function testTouchedMinutesMaxRows(): number | undefined {
  return testPositiveInt('P2PTEL_TEST_TOUCHED_MINUTES_MAX_ROWS');
}

/**
 * For tests only, never set in production: the most reports a build's own merge of layers takes
 * together (`P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS`, instead of INLINE_MERGE_MAX_REPORTS;
 * warehouse/states/layered-state.ts), so that layers over it need a few thousand reports, not
 * 65,536. Read at each call.
 */
export function testInlineMergeMaxReports(): number | undefined {
  return testPositiveInt('P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS');
}

/**
 * For tests only, never set in production: the raw bytes one load of edge hours reads
 * (`P2PTEL_TEST_EDGE_LOAD_BYTES`; warehouse/states/window-pieces.ts), so that a small warehouse
 * loads them a state at a time. Read at each call.
 */
export function testEdgeLoadBytes(): number | undefined {
  return testPositiveInt('P2PTEL_TEST_EDGE_LOAD_BYTES');
}

/**
 * For tests only, never set in production: the sessions a stream of `start`'s sample data holds
 * (`P2PTEL_TEST_START_SESSIONS`, instead of 400; cli/actions/start.ts), so that the test runs of
 * `start` generate and roll up less. Read at each call.
 */
export function testStartSessions(): number | undefined {
  return testPositiveInt('P2PTEL_TEST_START_SESSIONS');
}
