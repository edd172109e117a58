// The console as the browser and HTTP tests use it: a sandbox, workers on the test Redis under a key prefix of their
// own, the console listening on a free port; and headless Chromium launched as this machine needs it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { Redis } from 'ioredis';
import { afterAll, afterEach, inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { buildConsole, type ConsoleOptions } from '../../src/server/app.ts';
import { queueEnv } from './env.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** A running console with its sandbox and workers; `close` stops them and deletes the prefix's Redis keys. */
export interface ConsoleStack {
  sandbox: RunningSandbox;
  workers: WorkerSet;
  app: FastifyInstance;
  config: Config;
  url: string;
  /** A temp dir holding reports/ and uploads/. */
  dir: string;
  close(): Promise<void>;
}

/**
 * Starts the stack; `name` makes the temp dir and the queue prefix (`ps-<name>-<pid>`); `jobsDir`: the workers' feed
 * files (none by default).
 */
export async function startConsoleStack(
  name: string,
  options: Omit<ConsoleOptions, 'config'> = {},
  stackOptions: { jobsDir?: string } = {},
): Promise<ConsoleStack> {
  const prefix = `ps-${name}-${process.pid}`;
  const sandbox = await startSandbox({ port: 0 });
  const dir = mkdtempSync(join(tmpdir(), `ps-${name}-`));
  const config = loadConfig(
    queueEnv(sandbox.url, inject('redisUrl'), prefix, dir, { OWNER_COMPANY_ID: DEMO_COMPANY_ID }),
  );
  const workers = await startWorkers(config, { jobsDir: stackOptions.jobsDir ?? join(dir, 'no-jobs') });
  const app = await buildConsole({ maxUploadBytes: 1024 * 1024, ...options, config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    sandbox,
    workers,
    app,
    config,
    url,
    dir,
    async close() {
      await app.close();
      await workers.close();
      await sandbox.close();
      const r = new Redis(inject('redisUrl'));
      const keys = await r.keys(`{${prefix}}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
    },
  };
}

/** Settings of a Chromium's context. */
export interface ChromiumOptions {
  acceptDownloads?: boolean;
  viewport?: { width: number; height: number };
}

/** Headless Chromium with a fresh profile and the flags this machine's closed network needs; `use` gets its context. */
export async function withChromium<T>(
  options: ChromiumOptions,
  use: (browser: BrowserContext) => Promise<T>,
): Promise<T> {
  const { browser, close } = await launchChromium(options);
  try {
    return await use(browser);
  } finally {
    await close();
  }
}

/**
 * One Chromium for the tests of a file, or of the `describe` it is called in, launched at the first call of the
 * function it returns (which, as withChromium, gives `use` its context) and closed after the last test; the pages a
 * test opened are closed after it.
 */
export function useChromium(options: ChromiumOptions): <T>(use: (browser: BrowserContext) => Promise<T>) => Promise<T> {
  let launched: ReturnType<typeof launchChromium> | undefined;
  afterEach(async () => {
    if (launched) for (const page of (await launched).browser.pages()) await page.close();
  });
  afterAll(async () => {
    if (launched) await (await launched).close();
  });
  return async (use) => {
    launched ??= launchChromium(options);
    return use((await launched).browser);
  };
}

async function launchChromium(options: ChromiumOptions): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  // A fresh profile each time (playwright passes it to chromium as --user-data-dir).
  const profile = mkdtempSync(join(tmpdir(), 'ps-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    ...options,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
