// The kinds of value that settings and command-line flags take, as zod schemas over strings (the
// environment's, commander's), with the messages a user reads when one is refused.
import { z } from 'zod';
import { CronExpressionParser } from 'cron-parser';

export const positiveInt = z.coerce.number().int('a whole number').positive('greater than 0');
export const nonNegativeInt = z.coerce.number().int('a whole number').nonnegative('0 or more');
export const positiveNumber = z.coerce.number().positive('greater than 0');
export const nonNegativeNumber = z.coerce.number().nonnegative('0 or more');

/** Node's longest timer delay (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
/** Seconds that a timer waits (a timeout, a poll, a flush): more than 0, within a Node timer's reach. */
export const timerSeconds = positiveNumber.max(MAX_TIMER_SECONDS, `at most ${MAX_TIMER_SECONDS} (about 24.8 days: a Node timer's longest wait)`);
/** Milliseconds that a timer waits, in whole numbers from `min`. */
export const timerMs = (min = 1) =>
  z.coerce
    .number()
    .int('a whole number')
    .min(min, min === 1 ? 'greater than 0' : `${min} or more`)
    .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} (about 24.8 days: a Node timer's longest wait)`);

/** A TCP port; 0 picks a free one. */
export const port = z.coerce.number().int('a whole number').min(0, 'from 0 to 65535').max(65535, 'from 0 to 65535');

/** A non-empty string: a folder, a file, an interface, a secret. */
export const text = z.string().min(1, 'not empty');

/** A DuckDB memory size such as 4GB or 512MiB. */
export const memorySize = z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 4GB or 512MiB');

/** A lifetime of issued tokens, such as 30d. */
export const lifetime = z.string().regex(/^\d{1,6}[smhd]$/, 'a lifetime such as 30d, 12h, 90m or 3600s');

/** A redis:// or rediss:// URL (BullMQ's connection). */
export const redisUrl = z
  .string()
  .refine((s) => URL.canParse(s) && /^rediss?:$/.test(new URL(s).protocol), 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379');

/** Namespaces every queue key, so that several deployments can share one Redis. */
export const queuePrefix = z.string().regex(/^[A-Za-z0-9_.{}-]{1,64}$/, '1–64 characters of [A-Za-z0-9_.{}-]');

/** A cron pattern (minute hour day month weekday, optionally seconds first), read in UTC. */
export const cron = z.string().refine((s) => {
  const fields = s.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return false;
  try {
    CronExpressionParser.parse(s, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}, 'a cron pattern of five fields (minute hour day month weekday), e.g. "*/5 * * * *"');

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_MESSAGE = 'a duration such as 5s, 30s or 2m, from 1s to 24h';

/** A duration such as 5s, 90s, 2m or 1h (units ms, s, m, h), as milliseconds: from 1 s to 24 h. */
export const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)$/, DURATION_MESSAGE)
  .transform((s) => Math.round(Number.parseFloat(s) * DURATION_UNITS_MS[/[a-z]+$/.exec(s)![0]]!))
  .refine((ms) => ms >= 1000 && ms <= 86_400_000, DURATION_MESSAGE);

/** A switch: a flag without a value (commander's `true`), or `1`/`0`, `true`/`false` in the environment. */
export const flagSwitch = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false'])], 'a switch: 1 or 0')
  .transform((v) => v === true || v === '1' || v === 'true');

/** Seconds (as the environment says them) to the milliseconds the code uses. */
export const secondsToMs = (s: number): number => Math.round(s * 1000);

/** Days (as the environment says them) to milliseconds. */
export const daysToMs = (d: number): number => Math.round(d * 86_400_000);

/** Mebibytes to bytes. */
export const mibToBytes = (mb: number): number => Math.round(mb * 2 ** 20);

/** A metrics listener of a process on METRICS_HOST, from its port setting; null when it has none. */
export function metricsListener(port: number | undefined, others: Readonly<Record<string, unknown>>): { port: number; host: string } | null {
  return port === undefined ? null : { port, host: String(others.METRICS_HOST) };
}
