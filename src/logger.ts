import { pino, type Logger } from 'pino';

/** The one root logger; runs and jobs log through `logger.child({ runId, jobId, stage })`. Credentials are redacted. */
export const logger: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { app: 'product-sync' },
  redact: {
    paths: ['token', 'apiToken', 'clientSecret', 'authorization', 'headers.authorization', 'config.apiToken', 'config.apiClientSecret'],
    censor: '[redacted]',
  },
}, pino.destination({ fd: 2, sync: true }));

export type { Logger };
