// The publish room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './catalog.ts';
export * from './layer-merge.ts';
export * from './publication.ts';
export * from './state-combine.ts';
