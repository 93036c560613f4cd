// The figures room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './bucket-series.ts';
export * from './piece-columns.ts';
export * from './windows.ts';
