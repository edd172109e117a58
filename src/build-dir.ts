/**
 * Where the running build is: src/ (TypeScript through tsx: tests, benches), dist/ file by file, or dist/cli.cjs (the
 * CLI bundled into one file, scripts/build.mjs). This module sits at the root of src/, so a path taken from it holds
 * in all three — where a module-relative path would not hold in the bundle, whose modules all have its URL.
 */
const here = import.meta.url;

/** True when running the TypeScript sources (through tsx). */
export const FROM_SOURCE = here.endsWith('.ts');

/** A module of the running build: `path` relative to src/, without extension (`pipeline/report/report-worker`). */
export const buildModule = (path: string): URL => new URL(`./${path}.${FROM_SOURCE ? 'ts' : 'js'}`, here);

/** A file the build copies as it is (`server/public/index.html`), relative to src/. */
export const buildFile = (path: string): URL => new URL(`./${path}`, here);

/** A file of the project itself (`schemas/mapping.schema.json`), relative to its root. */
export const projectFile = (path: string): URL => new URL(`../${path}`, here);
