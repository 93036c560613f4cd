// The session-reports room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './columns.ts';
export * from './dedup-raw.ts';
export * from './empty-relations.ts';
export * from './projection.ts';
