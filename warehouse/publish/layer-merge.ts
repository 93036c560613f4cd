// The background merge of a layered state's layers (docs/warehouse-state.md, "Merging layers"): a
// run's own build merges only small trailing layers into its new one (INLINE_MERGE_MAX_REPORTS
// together), so that its cost never jumps by the rewrite of a large layer; the larger merges that
// keep a day's layers few (sizes at least double going back) are made here, by the compaction
// job (jobs/compaction/compact.ts: inline before `pipeline`, in the background of `start`, a job
// of the worker tier), while runs go on.
// A merge reads the merged layers' files (immutable: every state that keeps a layer links it) and
// writes the merged layer's files into a scratch folder of the partition, without any lock: its
// reports in one file, and its pieces regrouped from theirs (writeMergedLayerFiles);
// then, holding the partition's lock for a moment, it makes a new state of the partition's newest
// one with those layers replaced by the merged layer (every other file linked): the same reports,
// the same figures, fewer layers. A run that added layers meanwhile is no matter (they stay on
// top); a state built whole meanwhile (the merged layers are gone) makes the merge moot, and it is
// dropped. A crash leaves a scratch folder (`.tmp-<pid>@<host>~merge-…`), removed by retention as debris.
import fs from 'node:fs/promises';
import type { DbSession } from '../duckdb/index.ts';
import { inlineMergeMaxReports, layersToMerge, linkLayerFiles, MAX_MERGED_LAYER_REPORTS, writeMergedLayerFiles } from '../states/index.ts';
import { withPartitionLocks, type PartitionRef } from '../states/index.ts';
import { ownedScratchName } from '../../lib/scratch-owner.ts';
import { newStateId, partitionKey, readStates, stateFiles, stateVersion, TMP_PREFIX, writeStates, type LayerMeta, type StateMeta } from '../states/index.ts';
import { dateOfUs, windowEdges } from '../states/index.ts';
import { unitSessionClasses } from './class-units.ts';
import { layerClassUnit } from '../states/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import type { Logger } from '../../lib/log.ts';
import { exists } from '../../lib/fsx.ts';

/**
 * The layers of `layers` (oldest first) that the background merge merges into one: the trailing
 * run that the doubling rule takes (layersToMerge, up to `maxReports`: LAYER_MERGE_MAX_REPORTS,
 * whose memory the merge holds), two layers at least, leaving out the newest layers that a build's own merge may still take (those holding
 * INLINE_MERGE_MAX_REPORTS together), so that a run going on meanwhile never merges them first.
 * Empty when there is nothing to merge.
 */
export function layersDueForMerge(layers: readonly LayerMeta[], maxReports: number = MAX_MERGED_LAYER_REPORTS): LayerMeta[] {
  let end = layers.length;
  const inlineMax = inlineMergeMaxReports();
  for (let tail = 0; end > 0 && tail + layers[end - 1]!.reports <= inlineMax; end--) tail += layers[end - 1]!.reports;
  if (end < 2) return [];
  const last = layers[end - 1]!;
  const { merged } = layersToMerge(layers.slice(0, end - 1), last.reports, maxReports);
  return merged.length > 0 ? [...merged, last] : [];
}

export interface MergeContext {
  s: DbSession;
  layout: WarehouseLayout;
  log: Logger;
  /** Recorded as the new state's runId. */
  runId: string;
  lockStaleMs: number;
  /** The largest merged layer (LAYER_MERGE_MAX_REPORTS): what bounds one merge's time. */
  maxReports?: number;
  /** Called once the merged layer's files are written, before the partition's lock is taken (tests: a run meanwhile). */
  beforeCommit?: () => Promise<void>;
}

/** What a merge did: the partition, the layers it merged and their reports; null when nothing was due, or the state moved on. */
export interface MergedLayers {
  partition: string;
  layers: number;
  reports: number;
  ms: number;
}

/** Merges the due layers (layersDueForMerge) of the partition's newest state, if any. */
export async function mergePartitionLayers(ctx: MergeContext, p: PartitionRef): Promise<MergedLayers | null> {
  const started = Date.now();
  const newest = await newestState(ctx.layout, p);
  if (!newest?.layers || newest.stateVersion !== stateVersion()) return null;
  const due = layersDueForMerge(newest.layers, ctx.maxReports);
  if (due.length < 2) return null;
  const from = stateFiles(ctx.layout, newest);
  const scratch = stateFiles(ctx.layout, { ...p, stateId: `${TMP_PREFIX}${ownedScratchName(`merge-${newStateId()}`)}` });
  await fs.mkdir(scratch.dir, { recursive: true });
  try {
    const layerId = newStateId();
    const merged = await writeMergedLayerFiles(ctx.s, due, due.map((l) => from.layer(l.layerId)), scratch.layer(layerId), layerId);
    await ctx.beforeCommit?.();
    const made = await withPartitionLocks(ctx.layout, [p], { staleMs: ctx.lockStaleMs, waitMs: 60_000 }, () => replaceLayers(ctx, p, due, merged, scratch));
    if (!made) {
      ctx.log.info({ partition: partitionKey(p.customerId, p.date) }, 'layer merge dropped: the state was built again meanwhile');
      return null;
    }
    await classesAhead(ctx, made, merged);
    const result = { partition: partitionKey(p.customerId, p.date), layers: due.length, reports: merged.reports, ms: Date.now() - started };
    ctx.log.info(result, 'layers merged');
    return result;
  } finally {
    await fs.rm(scratch.dir, { recursive: true, force: true });
  }
}

async function newestState(layout: WarehouseLayout, p: PartitionRef): Promise<StateMeta | null> {
  return (await readStates(layout)).get(partitionKey(p.customerId, p.date))?.[0] ?? null;
}

/**
 * Under the partition's lock: a new state of the newest one whose layers `due` (still there, one
 * after the other) are replaced by `merged`, whose files are in `scratch`; null when they are not.
 */
async function replaceLayers(
  ctx: MergeContext,
  p: PartitionRef,
  due: readonly LayerMeta[],
  merged: LayerMeta,
  scratch: ReturnType<typeof stateFiles>,
): Promise<StateMeta | null> {
  const latest = await newestState(ctx.layout, p);
  if (!latest?.layers || latest.stateVersion !== stateVersion()) return null;
  const at = latest.layers.findIndex((l) => l.layerId === due[0]!.layerId);
  if (at < 0 || due.some((l, i) => latest.layers![at + i]?.layerId !== l.layerId)) return null;
  const layers = [...latest.layers.slice(0, at), merged, ...latest.layers.slice(at + due.length)];
  const meta: StateMeta = {
    ...latest,
    stateId: newStateId(),
    runId: ctx.runId,
    builtAt: new Date().toISOString(),
    layers,
    hourRows: layers.reduce((a, l) => a + l.hourRows, 0),
    made: 'merged',
  };
  const from = stateFiles(ctx.layout, latest);
  await writeStates(ctx.layout, [
    {
      meta,
      write: async (out) => {
        for (const l of layers) await linkLayerFiles((l === merged ? scratch : from).layer(l.layerId), out.layer(l.layerId), l);
        await fs.link(from.series, out.series);
        for (const k of ['coarse', 'pending'] as const) if (await exists(from[k])) await fs.link(from[k], out[k]);
        meta.buildMs = Date.now() - Date.parse(meta.builtAt);
      },
    },
  ]);
  return meta;
}

/**
 * The merged layer's session classes at this moment's signature (class-units.ts), when its day is
 * today's: the next run, whose asOf is seconds later, finds them made instead of making them.
 */
async function classesAhead(ctx: MergeContext, state: StateMeta, merged: LayerMeta): Promise<void> {
  const asOf = new Date();
  const { asOfUs, lowerCutHours } = windowEdges(asOf);
  if (state.date !== dateOfUs(asOfUs)) return;
  try {
    await unitSessionClasses(ctx.s, { layout: ctx.layout, asOf, asOfUs, cutHours: lowerCutHours }, [layerClassUnit(ctx.layout, state, merged)]);
  } catch (err) {
    // Only a head start: the next run makes them if they are not there.
    ctx.log.warn({ err, partition: partitionKey(state.customerId, state.date) }, 'session classes of a merged layer not made ahead');
  }
}
