// The landing room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './compaction-records.ts';
export * from './landed-files.ts';
export * from './landing-changes.ts';
export * from './partition-load.ts';
export * from './validate-rows.ts';
