// One build of a (customer, date) partition's state at a time, whichever run or process needs it:
// a build takes the lock of each of its partitions (lib/file-lock.ts, under state/.building/), and
// a build that finds one taken waits for it (jobs/rollup/partition.ts then reuses the state made
// meanwhile when it describes the partition's files as they are).
import fs from 'node:fs/promises';
import path from 'node:path';
import { takeLock, type HeldLock, type LockOptions } from '../../lib/file-lock.ts';
import type { WarehouseLayout } from '../layout.ts';
import { partitionKey } from './state-store.ts';

export interface PartitionRef {
  customerId: string;
  date: string;
}

function lockFile(layout: WarehouseLayout, p: PartitionRef): string {
  return path.join(layout.state, '.building', `customer=${p.customerId},date=${p.date}.lock`);
}

/**
 * `work` while holding the lock of every partition of `partitions`. Locks are taken in one order
 * (customer, then date) whoever takes them, so that two batches that share partitions never wait
 * for each other both ways.
 */
export async function withPartitionLocks<T>(layout: WarehouseLayout, partitions: readonly PartitionRef[], opts: LockOptions, work: () => Promise<T>): Promise<T> {
  await fs.mkdir(path.join(layout.state, '.building'), { recursive: true });
  const ordered = [...partitions].sort((a, b) => (partitionKey(a.customerId, a.date) < partitionKey(b.customerId, b.date) ? -1 : 1));
  const held: HeldLock[] = [];
  try {
    for (const p of ordered) held.push(await takeLock(lockFile(layout, p), opts));
    return await work();
  } finally {
    await Promise.all(held.map((lock) => lock.release()));
  }
}
