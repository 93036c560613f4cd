// The platform's configuration document (config/platform.json, or the file PLATFORM_CONFIG
// names): defaults that tenants' figures fall back on. Validated by a schema when read.
import fs from 'node:fs';
import { z } from 'zod';
import { describeZodError, InternalError } from '../lib/errors.ts';
import { DEFAULT_PLATFORM_CONFIG_FILE } from '../lib/config.ts';
import { validateOrigins } from '../lib/origin-rules.ts';
import { StampedReads } from '../lib/stamped-reads.ts';

export const PlatformConfigSchema = z.object({
  billing: z.object({
    currency: z.literal('USD'),
    /** USD per GB when a tenant has no CDN rate on file (docs/api.md: 0.02). */
    defaultCdnPricePerGb: z.number().nonnegative(),
    /** Share of the avoided CDN cost charged as the service fee, in percent (default 25). */
    defaultSavingsSharePct: z.number().min(0).max(100),
  }),
  manifests: z.object({
    /** What /manifest/sign enforces for a tenant whose own allowlist is empty (normalised on load). */
    defaultOrigins: z.array(z.string()).transform((list, ctx) => {
      const r = validateOrigins(list);
      if (!r.ok) {
        for (const p of r.problems) ctx.addIssue({ code: 'custom', message: `entry ${p.index ?? ''} ${p.reason}`.replace('  ', ' ') });
        return z.NEVER;
      }
      return r.origins;
    }),
    /** Lifetime of a manifest signature. */
    signatureTtlSeconds: z.number().int().positive().max(7 * 86_400),
  }),
  /** The platform's live configuration, as pilot reports describe it. */
  live: z.object({
    remoteConfigPolicy: z.string().min(1),
    uploadCapsKbps: z.record(z.string(), z.number().int().positive()),
    authMode: z.string().min(1),
    telemetryRetentionDays: z.number().int().positive(),
    dataRegion: z.string().min(1),
    signalingDeployment: z.object({
      regions: z.array(z.string().min(1)).min(1),
      instancesPerRegion: z.number().int().positive(),
      transport: z.string().min(1),
    }),
  }),
  /** Pilot reports: pass criteria (docs/api.md defaults), risk thresholds, forecasts. */
  pilot: z.object({
    criteria: z.object({
      minSessions: z.number().int().nonnegative(),
      minSteadyStateOffload: z.number().min(0).max(1),
      minP2pConnectionSuccess: z.number().min(0).max(1),
      maxValidationFailures: z.number().int().nonnegative(),
      maxRebufferRatioVsControl: z.number().positive(),
      maxRebufferRatioWithoutControl: z.number().min(0).max(1),
      maxStartupP95IncreaseMsVsControl: z.number().nonnegative(),
      maxStartupP95MsWithoutControl: z.number().positive(),
    }),
    risks: z.object({
      /** Below this many sessions the sample is small (a risk, besides the minimum criterion). */
      smallSampleSessions: z.number().int().positive(),
      maxSignalingErrorsPerSession: z.number().nonnegative(),
    }),
    /** Length of the event that event economics forecast. */
    eventDurationHours: z.number().positive().max(168),
    /** A forecast cross-check off by more than this share is flagged. */
    forecastTolerance: z.number().positive().max(1),
    defaultBucketSeconds: z.number().int().min(60).max(21_600),
  }),
});

export type PlatformConfig = z.infer<typeof PlatformConfigSchema>;

export { DEFAULT_PLATFORM_CONFIG_FILE };

export class PlatformConfigError extends InternalError {
  override name = 'PlatformConfigError';
  override readonly errorCode = 'platform_config_invalid';
}

export function loadPlatformConfig(file: string = DEFAULT_PLATFORM_CONFIG_FILE): PlatformConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new PlatformConfigError(`cannot read the platform configuration ${file}: ${(err as Error).message}`);
  }
  const parsed = PlatformConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new PlatformConfigError(`invalid platform configuration ${file}: ${describeZodError(parsed.error)}`);
  }
  return parsed.data;
}

/**
 * The platform configuration as long-running processes read it: a stat of the file on every read
 * (a few µs), parsed again only when its inode, size or times changed, so an edit shows in the
 * next request or run without a restart, and the API and the report job always agree on it (the
 * pilot reports' inputs fingerprint included). An edit that does not validate keeps the last
 * good document in use (reported once per version through `onInvalid`); with none yet, it throws.
 */
export class PlatformConfigReader {
  private readonly reads = new StampedReads<PlatformConfig>();
  /** The last document that validated. */
  private good: PlatformConfig | null = null;
  /** Whether the file being missing (or not stat-able) has been reported, once while it lasts. */
  private missingTold = false;

  constructor(
    readonly file: string = DEFAULT_PLATFORM_CONFIG_FILE,
    private readonly onInvalid: (err: PlatformConfigError) => void = () => {},
  ) {}

  current(): PlatformConfig {
    let value: PlatformConfig;
    try {
      value = this.reads.readSync(this.file, () => this.load());
    } catch (err) {
      if (err instanceof PlatformConfigError) throw err; // none validated yet
      return this.missing(new PlatformConfigError(`cannot read the platform configuration ${this.file}: ${(err as Error).message}`));
    }
    this.missingTold = false;
    return value;
  }

  /**
   * The file's document or, when it does not validate, the last good one: kept under the refused
   * version's stamp like a document, so that each version is reported (and parsed) once.
   */
  private load(): PlatformConfig {
    try {
      return (this.good = loadPlatformConfig(this.file));
    } catch (err) {
      if (!this.good) throw err;
      this.onInvalid(err as PlatformConfigError);
      return this.good;
    }
  }

  private missing(err: PlatformConfigError): PlatformConfig {
    if (!this.good) throw err;
    if (!this.missingTold) {
      this.missingTold = true;
      this.onInvalid(err);
    }
    return this.good;
  }
}

const readers = new Map<string, PlatformConfigReader>();

/** The process's one reader of a platform configuration file (the first caller's `onInvalid` reports). */
export function platformConfigReader(file: string, onInvalid?: (err: PlatformConfigError) => void): PlatformConfigReader {
  let r = readers.get(file);
  if (!r) readers.set(file, (r = new PlatformConfigReader(file, onInvalid)));
  return r;
}
