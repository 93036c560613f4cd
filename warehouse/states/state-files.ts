// Files of the state area that hold what many partition states hold (a customer's older hour
// pieces, a block of days' series), so that a run opens a few files rather than one per day. Each
// is named by a hash of exactly which states it holds: a file of that name is always right, and
// any change of those states names another file.
import fs from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { copyToParquet, type CopyOptions } from '../duckdb/index.ts';
import type { DbSession, SqlParams, SqlTypes } from '../duckdb/index.ts';
import type { StateMeta } from './state-store.ts';
import { exists } from '../../lib/fsx.ts';

/** A hash of exactly which states a compacted file holds (and of `version`, when its layout has one). */
export function statesKey(states: readonly StateMeta[], version: string[] = []): string {
  return createHash('sha256')
    .update([...version, ...states.map((m) => `${m.date}/${m.stateId}`).sort()].join('\n'))
    .digest('hex')
    .slice(0, 24);
}

/**
 * A file of the state area named by what it is made of (a compacted file, a unit's classes, a
 * summary base): written from `query` the first time a run needs it, and touched on every use,
 * so that retention keeps the files runs still use. Returns whether this call wrote it.
 */
export async function fileMadeOnce(s: DbSession, file: string, query: string, options: CopyOptions, params?: SqlParams, types?: SqlTypes): Promise<boolean> {
  const made = !(await exists(file));
  if (made) await copyToParquet(s, query, file, params, types, options);
  const now = new Date();
  await fs.utimes(file, now, now).catch(() => {});
  return made;
}

/** A compacted file named by statesKey (fileMadeOnce). */
export async function compactedFile(s: DbSession, file: string, query: string, options: CopyOptions): Promise<string> {
  await fileMadeOnce(s, file, query, options);
  return file;
}
