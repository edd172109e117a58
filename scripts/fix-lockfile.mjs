// The npm registry this project installs from lacks msgpackr-extract's prebuilt packages for other platforms (darwin,
// win32, linux-arm), so `npm install` writes a lockfile without them and `npm ci` then refuses it ("Missing … from lock
// file"). This adds their entries back (optional, os/cpu-restricted: never installed on linux-x64). Run it after any
// `npm install` that rewrites package-lock.json.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
const wanted = parent?.optionalDependencies ?? {};
let added = 0;
for (const [name, version] of Object.entries(wanted)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const [, os, cpu] = /-(darwin|linux|win32)-(arm64|x64|arm)$/.exec(name) ?? [];
  if (!os) continue;
  lock.packages[key] = { version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
  added++;
}
const [root, ...rest] = Object.entries(lock.packages);
lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
