// The reads room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './breakdown-batch.ts';
export * from './breakdowns.ts';
export * from './series-read.ts';
export * from './stream-session-reports.ts';
export * from './short-windows.ts';
