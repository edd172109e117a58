import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` beside `from` (the caller's `import.meta.url`) in the same build as the
 * caller: dist/*.js, or src/*.ts through tsx (tests, benches), registered in the thread first — a thread does not
 * inherit the loader hooks of the one that starts it.
 */
export function startWorkerThread(from: string, name: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const fromSource = from.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, from);
  return fromSource
    ? new Worker(`import('tsx/esm/api').then((m) => m.register()).then(() => import(${JSON.stringify(entry.href)}));`, { ...options, eval: true })
    : new Worker(entry, options);
}
