// The platform's configuration document (config/platform.json, or the file PLATFORM_CONFIG
// names): defaults that tenants' figures fall back on. Validated by a schema when read.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { describeZodError } from '../lib/errors.ts';
import { validateOrigins } from '../warehouse/control/origin-rules.ts';

export const PlatformConfigSchema = z.object({
  billing: z.object({
    currency: z.literal('USD'),
    /** USD per GB when a tenant has no CDN rate on file (api-decisions.md: 0.02). */
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
});

export type PlatformConfig = z.infer<typeof PlatformConfigSchema>;

export const DEFAULT_PLATFORM_CONFIG_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'platform.json');

export class PlatformConfigError extends Error {
  override name = 'PlatformConfigError';
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
