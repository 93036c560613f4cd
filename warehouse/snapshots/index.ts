// The snapshots room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './run-lock.ts';
export * from './snapshot-folders.ts';
export * from './snapshot-manifest.ts';
export * from './snapshot-read.ts';
