#!/usr/bin/env node
// Runs the TypeScript sources through tsx so `npx product-sync` works right after `npm ci`, with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
