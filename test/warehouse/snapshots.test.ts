// Snapshot publication: a run killed while writing or while publishing leaves the last snapshot
// intact and readable, the next run clears its debris; retention; an older asOf never wins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { beginBuild, cleanDebris, listSnapshots, lockPublication, newSnapshotId, publishBuild, readCurrent, readHistory } from '../../warehouse/snapshots/snapshot-folders.ts';
import { LockLostError, takeLock, type HeldLock } from '../../lib/file-lock.ts';
import { hostScratchDir } from '../../warehouse/layout.ts';
import { silentLogger } from '../../lib/log.ts';
import { killRollupAt } from '../helpers/fixtures.ts';
import { readStates } from '../../warehouse/states/state-store.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';

const START = new Date('2026-11-20T00:00:00Z');
const at = (h: number) => new Date(START.getTime() + h * 3_600_000);

let wh: TestWarehouse;

const killAt = (stage: 'partitions' | 'swap', asOf: Date): Promise<void> => killRollupAt(wh.root, stage, asOf);

beforeAll(async () => {
  wh = await openTestWarehouse({ SNAPSHOT_KEEP: '3', PUBLISH_LOCK_STALE_SECONDS: '2' });
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 60, start: START, hours: 6, seed: 3 });
});

afterAll(async () => {
  await wh?.close();
});

describe('snapshot publication', () => {
  it('a run killed after writing its partitions leaves the last snapshot intact, and the next run clears the debris', async () => {
    const first = await runPipeline(wh, { asOf: at(3) });
    const before = await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!);

    await killAt('partitions', at(4));
    const debris = (await fs.readdir(wh.layout.snapshots)).filter((n) => n.startsWith('.build-'));
    expect(debris).toHaveLength(1);
    expect((await readCurrent(wh.layout))!.snapshot).toBe(first.manifest.snapshot);
    expect(await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!)).toEqual(before);

    const next = await runPipeline(wh, { asOf: at(5) });
    expect((await fs.readdir(wh.layout.snapshots)).filter((n) => n.startsWith('.build-'))).toEqual([]);
    expect((await readCurrent(wh.layout))!.snapshot).toBe(next.manifest.snapshot);
  });

  it('a run killed inside publication, before the pointer moved, changes nothing a reader sees', async () => {
    const current = (await readCurrent(wh.layout))!;
    const before = await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!);
    await killAt('swap', at(6));
    // Its folder was renamed into place, but CURRENT still names the old snapshot.
    expect((await listSnapshots(wh.layout)).length).toBeGreaterThan((await readHistory(wh.layout)).length);
    expect(await readCurrent(wh.layout)).toEqual(current);
    expect(await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!)).toEqual(before);
    await fs.access(wh.layout.catalog);

    // The dead publisher was a process of this host: its lock is taken over at once, not once stale.
    const waited = Date.now();
    const lock = await lockPublication(wh.layout, 60_000);
    expect(Date.now() - waited).toBeLessThan(1000);
    await lock.release();
    // The next publisher removes its unpublished folder.
    const next = await runPipeline(wh, { asOf: at(6) });
    expect(next.published).toBe(true);
    const history = await readHistory(wh.layout);
    expect(await listSnapshots(wh.layout)).toEqual([...history].sort());
  });

  it('a publisher that lost its lock (its renewals stalled and another took it over) stops before moving CURRENT', async () => {
    const current = await readCurrent(wh.layout);
    await beginBuild(wh.layout, 'stalled-publisher', process.pid);
    let taker: HeldLock | null = null;
    const stall = async () => {
      const file = path.join(wh.layout.snapshots, 'publish.lock');
      const past = new Date(Date.now() - 5000);
      await fs.utimes(file, past, past);
      taker = await takeLock(file, { staleMs: 2000, waitMs: 0 });
      await new Promise((r) => setTimeout(r, 1000)); // a renewal finds the lock taken
    };
    const outcome = await publishBuild(wh.layout, 'stalled-publisher', newSnapshotId(at(7)), at(7), { keep: 5, lockStaleMs: 2000, beforeSwap: stall }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(await readCurrent(wh.layout)).toEqual(current);
    await taker!.release();
  });

  it("removes the scratch folders of this host's dead processes, never another host's", async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // exited: its pid is free
    const ours = path.join(hostScratchDir(wh.layout), `duckdb-${dead}`);
    // Another machine sharing the warehouse: a pid that is dead here may be alive there.
    const theirs = path.join(wh.layout.tmp, 'host-another-machine', `duckdb-${dead}`);
    const alive = path.join(hostScratchDir(wh.layout), `duckdb-${process.pid}`);
    for (const d of [ours, theirs]) await fs.mkdir(d, { recursive: true });
    await cleanDebris(wh.layout, 3_600_000, silentLogger);
    await expect(fs.access(ours)).rejects.toThrow();
    await fs.access(theirs);
    await fs.access(alive); // this process's own DuckDB spill folder
  });

  it('keeps the configured number of snapshots, the current one included', async () => {
    await runPipeline(wh, { asOf: at(6) });
    await runPipeline(wh, { asOf: at(6) });
    const history = await readHistory(wh.layout);
    expect(history).toHaveLength(3);
    expect(await listSnapshots(wh.layout)).toEqual([...history].sort());
    expect(history.at(-1)).toBe((await readCurrent(wh.layout))!.snapshot);
  });

  it('re-running the same asOf gives identical figures', async () => {
    const a = await runPipeline(wh, { asOf: at(6) });
    const sa = await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!);
    const b = await runPipeline(wh, { asOf: at(6) });
    const sb = await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!);
    expect(b.manifest.snapshot).not.toBe(a.manifest.snapshot);
    expect(sb).toEqual(sa);
  });

  it('writes each file schema once per customer in its manifest, and reads every file back with the schema its state recorded', async () => {
    await runPipeline(wh, { asOf: at(6) });
    const snap = (await currentSnapshot(wh.layout))!;
    type RawFile = { path: string; schema?: string; schemaRef?: number };
    const raw = JSON.parse(await fs.readFile(path.join(snap.dir, 'manifest.json'), 'utf8')) as { partitions: { customerId: string; files: RawFile[]; schemas?: string[] }[] };
    // The states' own records of each landed file's schema (meta.json of each partition state).
    const recorded = new Map<string, string>();
    for (const metas of (await readStates(wh.layout)).values()) for (const m of metas) for (const f of m.files) if (f.schema) recorded.set(f.path, f.schema);
    expect(recorded.size).toBeGreaterThan(0);
    for (const p of raw.partitions) {
      expect(p.files.length).toBeGreaterThan(1);
      expect(new Set(p.schemas).size).toBe(p.schemas!.length);
      for (const f of p.files) {
        expect(f.schema).toBeUndefined();
        expect(p.schemas![f.schemaRef!]).toBe(recorded.get(f.path));
      }
    }
    const read = snap.manifest.partitions.flatMap((p) => p.files);
    expect(read.length).toBe(raw.partitions.reduce((a, p) => a + p.files.length, 0));
    for (const f of read) expect(f.schema).toBe(recorded.get(f.path));
    // A manifest of the older form (a schema with every file) reads the same.
    const older = { ...raw, partitions: raw.partitions.map(({ schemas, ...p }) => ({ ...p, files: p.files.map(({ schemaRef, ...f }) => ({ ...f, schema: schemas![schemaRef!] })) })) };
    const olderFile = path.join(wh.root, 'older-manifest.json');
    await fs.writeFile(olderFile, JSON.stringify(older));
    for (const f of (await readSnapshotManifest(olderFile)).partitions.flatMap((p) => p.files)) expect(f.schema).toBe(recorded.get(f.path));
  });

  it('a run with an older asOf than the current snapshot does not replace it', async () => {
    const current = (await readCurrent(wh.layout))!;
    const old = await runPipeline(wh, { asOf: at(2) });
    expect(old.published).toBe(false);
    expect(await readCurrent(wh.layout)).toEqual(current);
    expect(await listSnapshots(wh.layout)).not.toContain(old.manifest.snapshot);
  });
});
