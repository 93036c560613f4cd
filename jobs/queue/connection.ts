// Redis connections of the worker tier (ioredis, as BullMQ wants them) and a bounded reachability
// check, so that a missing Redis is one clear line instead of ioredis retrying forever.
import { Redis, type RedisOptions } from 'ioredis';
import type { RedisConfig } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { InternalError } from '../../lib/errors.ts';

/** Redis is missing, unreachable or refuses us: the message is one line a user can act on. */
export class RedisUnavailableError extends InternalError {
  override name = 'RedisUnavailableError';
  override readonly errorCode = 'redis_unavailable';
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

/**
 * A connection for one process. `service` (workers) reconnects forever, because a worker must
 * ride out a Redis restart; `command` (enqueue, runs, schedule) gives up after a few tries, so a
 * command never hangs. BullMQ requires `maxRetriesPerRequest: null` on worker connections.
 */
export function redisClient(cfg: RedisConfig, mode: 'service' | 'command', log: Logger): Redis {
  const options: RedisOptions =
    mode === 'service'
      ? {
          maxRetriesPerRequest: null,
          connectTimeout: cfg.connectTimeoutMs,
          retryStrategy: (times) => Math.min(500 * times, 5000),
        }
      : {
          maxRetriesPerRequest: null,
          connectTimeout: cfg.connectTimeoutMs,
          // Give up after about connectTimeoutMs of failed reconnects: pending commands then fail.
          retryStrategy: (times) => (times * 250 > cfg.connectTimeoutMs ? null : 250),
        };
  const client = new Redis(cfg.url, options);
  let lastLogged = 0;
  // Without a listener ioredis prints every failed reconnect with a stack trace on stderr.
  client.on('error', (err: Error) => {
    if (Date.now() - lastLogged > 10_000) {
      lastLogged = Date.now();
      log.warn({ redis: redactUrl(cfg.url), err: err.message }, 'redis connection error');
    }
  });
  return client;
}

/**
 * Connect once, PING, and warn when Redis may evict keys (BullMQ loses jobs then). Throws
 * RedisUnavailableError within about `connectTimeoutMs`.
 */
export async function checkRedis(cfg: RedisConfig, log: Logger): Promise<void> {
  const where = redactUrl(cfg.url);
  const probe = new Redis(cfg.url, {
    lazyConnect: true,
    connectTimeout: cfg.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // connect() rejects with a bland "Connection is closed"; the cause arrives as an 'error' event.
  let cause: string | null = null;
  probe.on('error', (err: Error) => {
    cause ??= err.message;
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${cfg.connectTimeoutMs} ms`)), cfg.connectTimeoutMs + 500);
  });
  try {
    await Promise.race([
      (async () => {
        await probe.connect();
        await probe.ping();
      })(),
      deadline,
    ]);
    await warnOnEviction(probe, where, log);
  } catch (err) {
    const reason = cause ?? (err instanceof Error ? (err.message.split('\n')[0] ?? err.name) : String(err));
    throw new RedisUnavailableError(`cannot reach Redis at ${where} (${reason}); start Redis or point --redis / REDIS_URL at one`);
  } finally {
    clearTimeout(timer);
    // On a connection that never opened, disconnect() would hold the process for 2 s.
    if (probe.status !== 'end') probe.disconnect();
  }
}

async function warnOnEviction(client: Redis, where: string, log: Logger): Promise<void> {
  let reply: unknown;
  try {
    reply = await client.config('GET', 'maxmemory-policy');
  } catch {
    return; // CONFIG may be disabled (managed Redis): nothing to check then.
  }
  const policy = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : null;
  if (policy && policy !== 'noeviction') {
    log.warn({ redis: where, policy }, 'Redis maxmemory-policy should be noeviction: with eviction, queued jobs can vanish');
  }
}

/** Close a connection politely (QUIT), or cut it when Redis does not answer in time. */
export async function closeRedis(client: Redis, timeoutMs = 2000): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
  } catch {
    // Already closed or unreachable: disconnect below.
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
