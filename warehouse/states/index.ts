// The states room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './combine-plan.ts';
export * from './dead-scratch.ts';
export * from './layered-state.ts';
export * from './partition-lock.ts';
export * from './partition-state.ts';
export * from './state-files.ts';
export * from './state-retention.ts';
export * from './state-session-reports.ts';
export * from './state-store.ts';
export * from './window-pieces.ts';
