import type { WorkerOptions, Worker } from 'node:worker_threads';
import { buildModule, FROM_SOURCE } from './build-dir.ts';

/**
 * A worker thread running the module `path` (relative to src/, without extension) of the running build: dist/*.js, or
 * src/*.ts through tsx (tests, benches), registered in the thread first — a thread does not inherit the loader hooks
 * of the one that starts it.
 */
export function startWorkerThread(path: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  // Loaded here, when a thread starts: node:worker_threads is no part of a small run's start-up (the CLI loads this
  // module for every validate, to start a large sheet's report thread early).
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  const entry = buildModule(path);
  return FROM_SOURCE
    ? new Worker(`import('tsx/esm/api').then((m) => m.register()).then(() => import(${JSON.stringify(entry.href)}));`, {
        ...options,
        eval: true,
      })
    : new Worker(entry, options);
}
