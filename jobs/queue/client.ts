// The queues of the worker tier and a flow producer, on one Redis connection, for whoever adds
// or inspects jobs: CLI commands and the workers themselves (the plan step adds flows).
import { FlowProducer, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { checkRedis, closeRedis, redisClient } from './connection.ts';
import { QUEUES } from './names.ts';

export interface Queues {
  client: Redis;
  prefix: string;
  rollup: Queue;
  partitions: Queue;
  reports: Queue;
  compaction: Queue;
  flows: FlowProducer;
  close(): Promise<void>;
}

/**
 * Check that Redis answers (one clear error if not), then open the queues. `mode` as in
 * redisClient: workers reconnect forever, commands give up.
 */
export async function openQueues(cfg: RedisConfig, mode: 'service' | 'command', log: Logger): Promise<Queues> {
  await checkRedis(cfg, log);
  const client = redisClient(cfg, mode, log);
  const opts = { connection: client, prefix: cfg.prefix };
  const rollup = new Queue(QUEUES.rollup, opts);
  const partitions = new Queue(QUEUES.partitions, opts);
  const reports = new Queue(QUEUES.reports, opts);
  const compaction = new Queue(QUEUES.compaction, opts);
  const flows = new FlowProducer(opts);
  // Connection trouble is already logged by the client; an unheard 'error' event would throw.
  for (const q of [rollup, partitions, reports, compaction]) q.on('error', () => {});
  flows.on('error', () => {});
  return {
    client,
    prefix: cfg.prefix,
    rollup,
    partitions,
    reports,
    compaction,
    flows,
    async close() {
      await Promise.allSettled([rollup.close(), partitions.close(), reports.close(), compaction.close(), flows.close()]);
      await closeRedis(client);
    },
  };
}
