// The collector's local append-only spool: accepted reports as NDJSON lines in numbered segment
// files, fsynced before any request that brought them is answered (docs/architecture.md, principle 8).
// Group commit: appends that arrive while a write+fsync is in flight wait and go out together in
// the next one, so throughput does not pay one fsync per request. The flusher seals the open
// segment (a new one takes the appends), lands sealed ones as Parquet and deletes them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../lib/fsx.ts';
import type { Logger } from '../lib/log.ts';
import { cutTornTail, newGeneration, openHere, PID_FILE, SEGMENT_RE, segmentKey, segmentName, segmentNames, spoolId, takePidLock } from './spool-folder.ts';
import { countSpoolError, observeSpoolSync } from './metrics.ts';

export { SpoolBusyError } from './spool-folder.ts';

export interface Segment {
  /**
   * The segment's name, unique forever: the spool's generation (the time its process opened it,
   * and a random part) and the segment's number in that generation. Landed files are named from it.
   */
  key: string;
  seq: number;
  file: string;
  /**
   * How its lines are written: `wrapped`, `{"tsu":<ts in epoch µs>,"r":<report>}` (seg-N.r.ndjson);
   * `flat`, the report's columns with ts in epoch µs (seg-N.ndjson, written by collectors before
   * the wrapped form, still landed when one is left in a spool).
   */
  form: 'wrapped' | 'flat';
  bytes: number;
  /** Reports it holds; null for a segment left by an earlier process (not counted). */
  reports: number | null;
  /**
   * When its first line was acknowledged (epoch ms); for a segment left by an earlier process, when
   * its file was last written (what can be told of it); null while it holds nothing.
   */
  firstAt: number | null;
}

interface Pending {
  data: Buffer;
  reports: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface Active extends Segment {
  handle: fs.FileHandle;
  openedAt: number;
  /** After a failed write: closed, cut back to what was acknowledged, and sealed (or removed). */
  retired: boolean;
}

export class Spool {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private sealWaiters: { resolve: (s: Segment | null) => void; reject: (err: Error) => void }[] = [];
  private writing = false;
  private failure: Error | null = null;
  private closed = false;
  private recovery: NodeJS.Timeout | null = null;
  private recoveryAttempts = 0;
  /** The next segment's number in this generation (a number is never tried twice). */
  private nextSeq: number;

  private constructor(
    readonly dir: string,
    /** Names this spool's landed files, so that collectors sharing a warehouse never collide. */
    readonly id: string,
    /** This process's generation: its segments are `<generation>-<seq>`. */
    private readonly generation: string,
    private active: Active,
    private readonly sealedSegments: Segment[],
    private readonly log: Logger,
  ) {
    this.nextSeq = active.seq + 1;
  }

  /**
   * Open (or create) a spool folder: take its pid lock, keep the segments an earlier process left
   * (their torn last line, never acknowledged, cut off) to be landed, and open a new segment.
   */
  static async open(dir: string, log: Logger): Promise<Spool> {
    await fs.mkdir(dir, { recursive: true });
    await takePidLock(dir);
    const id = await spoolId(dir);
    const sealed: Segment[] = [];
    for (const name of await segmentNames(dir)) {
      const file = path.join(dir, name);
      const bytes = await cutTornTail(file);
      if (bytes === 0) {
        await fs.rm(file, { force: true });
        continue;
      }
      const m = SEGMENT_RE.exec(name)!;
      const wrapped = m[3] !== undefined;
      const { mtimeMs } = await fs.stat(file);
      sealed.push({ key: segmentKey(m[1]!, Number(m[2])), seq: Number(m[2]), file, form: wrapped ? 'wrapped' : 'flat', bytes, reports: null, firstAt: mtimeMs });
    }
    if (sealed.length > 0) log.info({ segments: sealed.length, bytes: sealed.reduce((a, s) => a + s.bytes, 0) }, 'spool: replaying segments left by an earlier run');
    const generation = newGeneration();
    const active = await openSegment(dir, generation, 1);
    return new Spool(dir, id, generation, active, sealed, log);
  }

  /** Append lines (whole NDJSON lines); resolves once they are on disk (fsync), rejects if not. */
  append(data: Buffer, reports: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('spool closed'));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ data, reports, resolve, reject });
      this.pendingBytes += data.length;
      this.kick();
    });
  }

  /** Seal the open segment (if it holds anything) and open the next; returns the sealed one. */
  seal(): Promise<Segment | null> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.sealWaiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Sealed segments waiting to be landed, oldest first. */
  sealed(): readonly Segment[] {
    return this.sealedSegments;
  }

  /**
   * Forget a landed segment: delete its file (durably, so a restart does not land it again). It is
   * forgotten as soon as its file is gone, before the folder's fsync: a segment left in the list
   * without its file (the fsync failed, out of descriptors) made every later landing fail on it,
   * so nothing sealed after it landed until a restart (a full-suite run of spool-recovery's
   * descriptor case, 2026-11-27). If the fsync fails, a crash may bring the file back: it is landed
   * again, the same reports (at least once, deduplicated downstream).
   */
  async remove(segment: Segment): Promise<void> {
    await fs.rm(segment.file, { force: true });
    const i = this.sealedSegments.indexOf(segment);
    if (i >= 0) this.sealedSegments.splice(i, 1);
    await fsyncDir(this.dir);
  }

  /** Bytes accepted and not landed yet (sealed, open, and waiting for the next fsync). */
  bytes(): number {
    return this.sealedSegments.reduce((a, s) => a + s.bytes, 0) + this.active.bytes + this.pendingBytes;
  }

  /** When the oldest acknowledged report not landed yet was acknowledged (epoch ms), or null when all are landed. */
  oldestUnlandedAt(): number | null {
    const times = [...this.sealedSegments, this.active].map((s) => s.firstAt).filter((t): t is number => t !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /** The open segment: how many reports it holds and since when (ms since epoch). */
  openSegment(): { reports: number; bytes: number; openedAt: number } {
    return { reports: this.active.reports ?? 0, bytes: this.active.bytes, openedAt: this.active.openedAt };
  }

  /** The error that stopped the spool's writes (a failed write or fsync), or null; it tries again on its own. */
  failed(): Error | null {
    return this.failure;
  }

  /** Wait for pending writes, then close the open segment (it stays on disk for the flusher or the next start). */
  async close(): Promise<void> {
    while (this.writing) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    if (this.recovery) clearTimeout(this.recovery);
    await this.active.handle.close().catch(() => {});
    if (!this.active.retired && this.active.bytes === 0) await fs.rm(this.active.file, { force: true });
    await fs.rm(path.join(this.dir, PID_FILE), { force: true });
    openHere.delete(path.resolve(this.dir));
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = true;
    void this.loop().finally(() => {
      this.writing = false;
      // Work that arrived in the tick between the last check and now.
      if (this.pending.length > 0 || this.sealWaiters.length > 0) this.kick();
    });
  }

  /** The one writer: every batch and every seal goes through here, in order. */
  private async loop(): Promise<void> {
    while (!this.failure && (this.pending.length > 0 || this.sealWaiters.length > 0)) {
      if (this.sealWaiters.length > 0) {
        const waiters = this.sealWaiters.splice(0);
        try {
          const sealed = await this.rotate();
          for (const w of waiters) w.resolve(sealed);
        } catch (err) {
          this.fail(err as Error);
          for (const w of waiters) w.reject(err as Error);
        }
        continue;
      }
      const batch = this.pending.splice(0);
      // The batches as they are, in one writev: not concatenated first (a copy of megabytes
      // under load, in fresh memory, on the thread that answers every request).
      let rest = batch.map((b) => b.data);
      const bytes = rest.reduce((n, d) => n + d.length, 0);
      try {
        const started = performance.now();
        while (rest.length > 0) {
          const { bytesWritten } = await this.active.handle.writev(rest);
          rest = afterWritten(rest, bytesWritten);
        }
        await this.active.handle.datasync();
        observeSpoolSync((performance.now() - started) / 1000);
      } catch (err) {
        this.fail(err as Error);
        for (const b of batch) b.reject(err as Error);
        return;
      } finally {
        this.pendingBytes -= bytes;
      }
      this.active.bytes += bytes;
      this.active.firstAt ??= Date.now();
      this.active.reports = (this.active.reports ?? 0) + batch.reduce((a, b) => a + b.reports, 0);
      for (const b of batch) b.resolve();
    }
    // A failure rejects whatever still waits.
    if (this.failure) {
      for (const b of this.pending.splice(0)) b.reject(this.failure);
      for (const w of this.sealWaiters.splice(0)) w.reject(this.failure);
    }
  }

  private async rotate(): Promise<Segment | null> {
    if (this.active.bytes === 0) return null;
    const next = await openSegment(this.dir, this.generation, this.nextSeq++);
    const old = this.active;
    this.active = next;
    await old.handle.close();
    const sealed: Segment = { key: old.key, seq: old.seq, file: old.file, form: old.form, bytes: old.bytes, reports: old.reports, firstAt: old.firstAt };
    this.sealedSegments.push(sealed);
    return sealed;
  }

  private fail(err: Error): void {
    countSpoolError(err);
    if (this.failure) return;
    this.failure = err;
    this.log.error({ err }, 'spool: a write failed; refusing reports (503) and trying again');
    this.retryLater();
  }

  private retryLater(): void {
    if (this.closed) return;
    // 0.25 s, 0.5 s, 1 s, then every 2 s: back within seconds once space or descriptors are.
    const delay = 250 * 2 ** Math.min(this.recoveryAttempts, 3);
    this.recovery = setTimeout(() => void this.recover(), delay);
    this.recovery.unref();
  }

  /**
   * Take writes again after a failure: the failed segment is cut back to what was acknowledged (a
   * failed write may have left part of a line, and the next line would then be lost with it) and
   * sealed for the flusher; a new segment takes the next writes. A step that fails is tried again
   * later; what was acknowledged before stays in its segment and is landed once.
   */
  private async recover(): Promise<void> {
    this.recovery = null;
    if (this.closed || !this.failure) return;
    try {
      if (!this.active.retired) await this.retire(this.active);
      const next = await openSegment(this.dir, this.generation, this.nextSeq++);
      this.active = next;
      const was = this.failure;
      this.failure = null;
      this.recoveryAttempts = 0;
      this.log.warn({ after: (was as NodeJS.ErrnoException).code ?? was.message }, 'spool: writing again');
      if (this.pending.length > 0 || this.sealWaiters.length > 0) this.kick();
    } catch (err) {
      countSpoolError(err as Error);
      this.recoveryAttempts++;
      if (this.recoveryAttempts <= 3 || this.recoveryAttempts % 30 === 0) this.log.error({ err, attempts: this.recoveryAttempts }, 'spool: still cannot write; trying again');
      this.retryLater();
    }
  }

  private async retire(segment: Active): Promise<void> {
    await segment.handle.truncate(segment.bytes);
    await segment.handle.datasync();
    await segment.handle.close();
    if (segment.bytes > 0) {
      this.sealedSegments.push({ key: segment.key, seq: segment.seq, file: segment.file, form: segment.form, bytes: segment.bytes, reports: segment.reports, firstAt: segment.firstAt });
    } else {
      await fs.rm(segment.file, { force: true });
    }
    segment.retired = true;
    // Its bytes are counted with the sealed segments now.
    segment.bytes = 0;
    segment.reports = 0;
    segment.firstAt = null;
  }
}

async function openSegment(dir: string, generation: string, seq: number): Promise<Active> {
  const key = segmentKey(generation, seq);
  const file = path.join(dir, segmentName(key));
  // 'wx': a segment is never appended to twice (a name is never reused).
  const handle = await fs.open(file, 'wx', 0o600);
  try {
    // The new file's entry must survive a crash before anything in it is acknowledged.
    await fsyncDir(dir);
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.rm(file, { force: true }).catch(() => {});
    throw err;
  }
  return { key, seq, file, form: 'wrapped', bytes: 0, reports: 0, firstAt: null, handle, openedAt: Date.now(), retired: false };
}

/** What remains of `buffers` once their first `n` bytes are written (a short write resumes there). */
export function afterWritten(buffers: readonly Buffer[], n: number): Buffer[] {
  let skip = n;
  let i = 0;
  while (i < buffers.length && skip >= buffers[i]!.length) skip -= buffers[i++]!.length;
  if (i === buffers.length) return [];
  return [buffers[i]!.subarray(skip), ...buffers.slice(i + 1)];
}
