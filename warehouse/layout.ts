// Where everything lives inside a warehouse folder (see docs/analysts.md for the picture).
import os from 'node:os';
import path from 'node:path';

export interface WarehouseLayout {
  root: string;
  /** Landing area of session reports: customer=<id>/date=<YYYY-MM-DD>/<file>.parquet */
  rawReports: string;
  /** Files that failed validation, with a `.reason.json` beside each. */
  quarantine: string;
  /** Published snapshots, one folder each, and the CURRENT pointer. */
  snapshots: string;
  currentPointer: string;
  /** Small control documents: tenants, keys, origins. */
  control: string;
  /** Scratch space: DuckDB spill files, writers' temporary files. */
  tmp: string;
  /** DuckDB database with views over the published snapshot, for analysts. */
  catalog: string;
  /** Pre-rendered pilot reports: reports/<snapshot>/<customerId>/, a static site per customer. */
  reports: string;
  /** Partition states: state/customer=<id>/date=<YYYY-MM-DD>/<stateId>/ (docs/warehouse-state.md). */
  state: string;
  /**
   * Compaction of landed files: compaction/customer=<id>/date=<YYYY-MM-DD>/<compacted file>.json
   * records which files each compacted file covers, and the lock of compactions.
   */
  compaction: string;
}

export function warehouseLayout(root: string): WarehouseLayout {
  const abs = path.resolve(root);
  const snapshots = path.join(abs, 'snapshots');
  return {
    root: abs,
    rawReports: path.join(abs, 'raw', 'session_reports'),
    quarantine: path.join(abs, 'quarantine'),
    snapshots,
    currentPointer: path.join(snapshots, 'CURRENT'),
    control: path.join(abs, 'control'),
    tmp: path.join(abs, 'tmp'),
    catalog: path.join(abs, 'catalog.duckdb'),
    reports: path.join(abs, 'reports'),
    state: path.join(abs, 'state'),
    compaction: path.join(abs, 'compaction'),
  };
}

/**
 * This host's scratch folder under tmp/. Scratch folders are named by process id, and a process id
 * means nothing on another machine sharing the warehouse: each host judges (and cleans up) only
 * its own.
 */
export function hostScratchDir(layout: WarehouseLayout): string {
  return path.join(layout.tmp, `host-${os.hostname().replace(/[^A-Za-z0-9._-]/g, '_')}`);
}

/** The landing folder of one customer's partition. */
export function customerRawDir(layout: WarehouseLayout, customerId: string): string {
  return path.join(layout.rawReports, `customer=${customerId}`);
}
