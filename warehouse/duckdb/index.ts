// The duckdb room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './db.ts';
export * from './param-values.ts';
export * from './parquet-write.ts';
export * from './session.ts';
export * from './slots.ts';
export * from './sql-text.ts';
export * from './temp-relations.ts';
