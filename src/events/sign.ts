import { createHmac } from 'node:crypto';
import { webhookKey } from '../webhook-secret.ts';

/** The Standard Webhooks headers of one delivery attempt. */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a webhook as Standard Webhooks say: `v1,` then the base64 HMAC-SHA256, keyed by the secret's decoded bytes, of
 * `<id>.<timestamp>.<body>` (timestamp in seconds since the epoch). The id is the event's, the same on every attempt;
 * the timestamp is the attempt's (receivers refuse old ones).
 */
export function signWebhook(secret: string, id: string, body: string, now: Date = new Date()): WebhookHeaders {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', webhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
