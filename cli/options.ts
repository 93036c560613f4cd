// Option types shared by CLI commands, as zod schemas over the strings commander hands over.
import type { Command } from 'commander';
import { z } from 'zod';

import { isoInstant } from '../lib/time.ts';

/** An ISO 8601 date-time with a zone (Z or ±hh:mm) naming a real instant, as a Date (lib/time.ts). */
export const isoDate = isoInstant;

export const positiveInt = z.coerce.number().int('a whole number').positive('greater than 0');
export const nonNegativeInt = z.coerce.number().int('a whole number').nonnegative('0 or more');
export const positiveNumber = z.coerce.number().positive('greater than 0');
/** A TCP port; 0 picks a free one. */
export const port = z.coerce.number().int('a whole number').min(0, 'from 0 to 65535').max(65535, 'from 0 to 65535');

/** Every command takes --warehouse (env WAREHOUSE_DIR, default ./data). */
export function withWarehouse(cmd: Command): Command {
  return cmd.option('--warehouse <dir>', 'warehouse folder (env WAREHOUSE_DIR, default ./data)');
}

/** Commands that talk to the worker tier take --redis and --queue-prefix. */
export function withRedis(cmd: Command): Command {
  return cmd
    .option('--redis <url>', 'Redis of the worker tier (env REDIS_URL, default redis://127.0.0.1:6379)')
    .option('--queue-prefix <prefix>', 'prefix of every queue key, one per deployment sharing a Redis (env QUEUE_PREFIX, default p2ptel)');
}
