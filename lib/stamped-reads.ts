// What was read from files, each kept under its file's stamp (inode, size, modification and change
// times, from one stat): while the stamp holds, a read costs that stat; any replacement (an atomic
// rename, a new inode) or edit in place shows at the next read. For documents read on hot paths
// (the platform configuration, control documents) that must follow edits without a restart.
import fs from 'node:fs';
import fsp from 'node:fs/promises';

function stampOf(st: fs.BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** Values read from files, by file. A value is shared: callers must not modify it. */
export class StampedReads<T> {
  private readonly kept = new Map<string, { stamp: string; value: T }>();

  /** `read(file)` as of now, read again only when the file's stamp changed. What stat throws is thrown as it is. */
  readSync(file: string, read: (file: string) => T): T {
    const stamp = stampOf(fs.statSync(file, { bigint: true }));
    const hit = this.kept.get(file);
    return hit?.stamp === stamp ? hit.value : this.keep(file, stamp, read(file));
  }

  /** `readSync`, with the stat and the read awaited. */
  async read(file: string, read: (file: string) => Promise<T>): Promise<T> {
    const stamp = stampOf(await fsp.stat(file, { bigint: true }));
    const hit = this.kept.get(file);
    return hit?.stamp === stamp ? hit.value : this.keep(file, stamp, await read(file));
  }

  /** Keep `value` as what `file` holds now (it was just written, and nothing else writes it meanwhile). */
  async remember(file: string, value: T): Promise<void> {
    this.keep(file, stampOf(await fsp.stat(file, { bigint: true })), value);
  }

  /** Drop what is kept of `file` (it is gone). */
  forget(file: string): void {
    this.kept.delete(file);
  }

  /** Drop what is kept of every file but those `keep` accepts (files gone since, in bulk). */
  keepOnly(keep: (file: string) => boolean): void {
    for (const file of this.kept.keys()) if (!keep(file)) this.kept.delete(file);
  }

  // Read after the stat: the content is at least as new as the stamp it is kept under, and a
  // change after the stat gives another stamp on the next read. A read that throws keeps nothing.
  private keep(file: string, stamp: string, value: T): T {
    this.kept.set(file, { stamp, value });
    return value;
  }
}
