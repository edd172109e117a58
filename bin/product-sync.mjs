#!/usr/bin/env node
// Runs the TypeScript sources through tsx so `npx product-sync` works right after `npm ci`, with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Every command has finished its work when main resolves: a forgotten socket must not keep the process alive.
setTimeout(() => process.exit(code), 1000).unref();
