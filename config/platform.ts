// The platform's configuration document (config/platform.json, or the file PLATFORM_CONFIG
// names): defaults that tenants' figures fall back on. Validated by a schema when read.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { describeZodError } from '../lib/errors.ts';

export const PlatformConfigSchema = z.object({
  billing: z.object({
    currency: z.literal('USD'),
    /** USD per GB when a tenant has no CDN rate on file (api-decisions.md: 0.02). */
    defaultCdnPricePerGb: z.number().nonnegative(),
    /** Share of the avoided CDN cost charged as the service fee, in percent (default 25). */
    defaultSavingsSharePct: z.number().min(0).max(100),
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
