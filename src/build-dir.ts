/**
 * Where the running build is: src/ (TypeScript through tsx: tests, benches) or dist/ (scripts/build.mjs: the CLI and
 * its chunks at dist/'s root, the report thread's entry at its place in src/). This module sits at the root of src/
 * and its code at the root of dist/, so a path taken from it holds in both.
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
