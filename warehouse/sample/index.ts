// The sample room's front door: what the rest of the house may use of it (docs/architecture.md).
export * from './generate.ts';
