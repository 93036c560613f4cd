#!/usr/bin/env node
// Entry point of the `p2ptel` command: registers the TypeScript loader, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
