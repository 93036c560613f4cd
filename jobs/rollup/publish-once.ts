// Publishing a distributed run exactly once. BullMQ delivers a job at least once: a worker can
// publish and die before recording it, and the retry then finds the build folder already renamed
// into a snapshot. That retry must report the snapshot it made, not fail and not publish twice.
import fs from 'node:fs/promises';
import { readSnapshotManifest, type SnapshotManifest } from '../../warehouse/snapshots/index.ts';
import { buildDir, publishedDir, readCurrent, readHistory, snapshotFiles } from '../../warehouse/snapshots/index.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { publishRollup, type PublishInput } from './publish.ts';
import type { JobDeps } from '../deps.ts';
import { InternalError } from '../../lib/errors.ts';

export interface PublishOnceResult {
  /** Null only when an earlier attempt's snapshot was discarded for a later asOf and pruned. */
  manifest: SnapshotManifest | null;
  published: boolean;
  /** True when an earlier attempt of this run had already done the publishing. */
  alreadyPublished: boolean;
}

/** The build folder of the run is gone and no trace of its publication was found. */
export class BuildGoneError extends InternalError {
  override name = 'BuildGoneError';
  override readonly errorCode = 'build_gone';
}

/** Clocks of the machine that planned and of the one that published may differ a little. */
const CLOCK_SKEW_MS = 60_000;

export async function publishRollupOnce(deps: JobDeps, input: PublishInput): Promise<PublishOnceResult> {
  const dir = buildDir(deps.layout, input.runId);
  if (await isDir(dir)) {
    const r = await publishRollup(deps, input);
    return { manifest: r.manifest, published: r.published, alreadyPublished: false };
  }
  // The build folder leaves only by being renamed into a snapshot (under the publish lock), or by
  // debris cleanup once it is older than SNAPSHOT_DEBRIS_GRACE_SECONDS.
  const prior = await findPublishedRun(deps.layout, input.runId, input.startedAt - CLOCK_SKEW_MS);
  if (prior) {
    deps.log.info({ runId: input.runId, snapshot: prior.snapshot }, 'run already published by an earlier attempt');
    return { manifest: prior, published: true, alreadyPublished: true };
  }
  const current = await readCurrent(deps.layout);
  if (current && Date.parse(current.asOf) > input.asOf.getTime()) {
    deps.log.info({ runId: input.runId }, 'run already published and discarded: a later asOf is current');
    return { manifest: null, published: false, alreadyPublished: true };
  }
  throw new BuildGoneError(
    `the build folder of run ${input.runId} is gone and no snapshot of it was published ` +
      `(removed as debris after SNAPSHOT_DEBRIS_GRACE_SECONDS?): enqueue the run again`,
  );
}

/** The published snapshot that run `runId` made at or after `notBefore` (ms), if any. */
export async function findPublishedRun(layout: WarehouseLayout, runId: string, notBefore: number): Promise<SnapshotManifest | null> {
  const history = await readHistory(layout);
  for (const snapshot of [...history].reverse()) {
    let manifest: SnapshotManifest;
    try {
      manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, snapshot)).manifest);
    } catch {
      continue; // pruned meanwhile
    }
    if (manifest.runId === runId && Date.parse(manifest.createdAt) >= notBefore) return manifest;
  }
  return null;
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isDirectory();
  } catch {
    return false;
  }
}
