// The compaction room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './merge.ts';
export * from './retire.ts';
export * from './select.ts';
