// Whether anything landed since an instant, judged by the modification times of the landing
// area's folders: every landing, compaction and quarantine creates, renames or removes a file in
// one of them, so a stat per partition folder tells it without listing every file.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { WarehouseLayout } from '../layout.ts';

/**
 * True when a folder of the landing area (its root, a `customer=` folder, a `date=` folder) was
 * modified at or after `sinceMs`: a change a run that listed the landing before then did not see.
 * Synchronous, as discoverLanding lists (a few µs a stat).
 */
export function landedSince(layout: WarehouseLayout, sinceMs: number): boolean {
  const changed = (dir: string) => {
    const st = statSync(dir, { throwIfNoEntry: false });
    return st !== undefined && st.mtimeMs >= sinceMs;
  };
  if (changed(layout.rawReports)) return true;
  for (const customer of subfolders(layout.rawReports)) {
    if (changed(customer)) return true;
    for (const date of subfolders(customer)) if (changed(date)) return true;
  }
  return false;
}

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name));
  } catch {
    return []; // gone meanwhile, or not made yet
  }
}
