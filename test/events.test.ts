import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { retryDelay } from '../src/events/backoff.ts';
import { eventBody, eventId, EVENT_TYPE_NAMES, EVENT_TYPES, makeEvent } from '../src/events/catalog.ts';
import { loadEndpoints, wants } from '../src/events/endpoints.ts';
import { signWebhook } from '../src/events/sign.ts';
import { loadFeeds } from '../src/queue/feeds.ts';
import { newSecret } from './helpers/webhook-receiver.ts';

describe('run events', () => {
  it('signs as Standard Webhooks say: the standardwebhooks package verifies it, and refuses a changed body', () => {
    const secret = newSecret();
    for (const type of EVENT_TYPE_NAMES) {
      const event = makeEvent(type, 'run-1', { n: 1, text: 'é "quoted"' });
      const body = eventBody(event);
      const headers = signWebhook(secret, event.id, body);
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual({
        type,
        timestamp: event.timestamp,
        data: { n: 1, text: 'é "quoted"' },
      });
      expect(() => new Webhook(secret).verify(body.replace('1', '2'), { ...headers })).toThrow();
      expect(() => new Webhook(newSecret()).verify(body, { ...headers })).toThrow();
    }
  });

  it('gives an event an id from what it reports and its type: the same on a redo, another for another type', () => {
    expect(eventId('run.finished', 'r1')).toBe(eventId('run.finished', 'r1'));
    expect(eventId('run.finished', 'r1')).not.toBe(eventId('run.aborted', 'r1'));
    expect(eventId('run.finished', 'r1')).not.toBe(eventId('run.finished', 'r2'));
  });

  it('retries first within the base delay, then doubles with jitter, and stops at the end of the window', () => {
    const opts = { baseMs: 5000, windowMs: 24 * 3600_000, since: 0 };
    expect(retryDelay(1, opts, 0, () => 0)).toBe(2500);
    expect(retryDelay(1, opts, 0, () => 1)).toBe(5000);
    expect(retryDelay(3, opts, 0, () => 1)).toBe(20_000);
    expect(retryDelay(3, opts, 0, () => 0)).toBe(10_000);
    expect(retryDelay(30, opts, 0, () => 1)).toBe(3600_000);
    // Past the window: dead; just before its end: one last attempt at the end.
    expect(retryDelay(5, opts, 24 * 3600_000, () => 1)).toBe(-1);
    expect(retryDelay(20, opts, 24 * 3600_000 - 60_000, () => 1)).toBe(60_000);
  });

  it('reads WEBHOOK_URL and a webhooks file (secret or secretEnv, event filters), and refuses a bad one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-hooks-'));
    const file = join(dir, 'webhooks.yaml');
    const a = newSecret();
    writeFileSync(
      file,
      `webhooks:\n  - { name: ops, url: "https://ops.example/hook", secretEnv: OPS_SECRET, events: ["feed.*", run.failed] }\n  - { url: "https://b.example/x?token=1", secret: "${a}" }\n`,
    );
    const config = loadConfig({
      WEBHOOK_URL: 'https://one.example/h',
      WEBHOOK_SECRET: newSecret(),
      WEBHOOKS_FILE: file,
    });
    const endpoints = await loadEndpoints(config, { OPS_SECRET: newSecret() });
    expect(endpoints.map((e) => e.id)).toEqual([expect.stringMatching(/^ep-/), 'ops', expect.stringMatching(/^ep-/)]);
    const ops = endpoints[1]!;
    expect(wants(ops, 'feed.missed')).toBe(true);
    expect(wants(ops, 'run.failed')).toBe(true);
    expect(wants(ops, 'run.finished')).toBe(false);
    expect(wants(endpoints[0]!, 'run.finished')).toBe(true);
    await expect(loadEndpoints(config, {})).rejects.toThrow(/OPS_SECRET is not set/);
    writeFileSync(file, `webhooks:\n  - { url: "https://b.example/x", secret: "nope", events: [run.nothing] }\n`);
    const err = await loadEndpoints(config, {}).catch((e: Error) => e);
    expect(String(err)).toMatch(/whsec_/);
    expect(String(err)).toMatch(/must name event types/);
    expect(() => loadConfig({ WEBHOOK_URL: 'https://one.example/h' })).toThrow(/go together/);
    expect(() => loadConfig({ WEBHOOK_URL: 'https://one.example/h', WEBHOOK_SECRET: 'plain' })).toThrow(/whsec_/);
  });

  it('documents every event type in docs/operations.md with a JSON example holding the fields the catalogue names', () => {
    const doc = readFileSync('docs/operations.md', 'utf8');
    for (const type of EVENT_TYPE_NAMES) {
      const section = doc.split(`### \`${type}\``)[1]?.split('\n### ')[0];
      expect(section, type).toBeDefined();
      const json = /```json\n([\s\S]*?)\n```/.exec(section!)?.[1];
      const example = JSON.parse(json!) as { type: string; timestamp: string; data: Record<string, unknown> };
      expect(example.type).toBe(type);
      expect(Date.parse(example.timestamp)).not.toBeNaN();
      const required = EVENT_TYPES[type].data.filter((k) => !k.endsWith('?'));
      for (const k of required) expect(example.data, `${type}.${k}`).toHaveProperty(k);
    }
  });

  it('takes a feed deadline as a cron like the schedule, and refuses one that is not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-expect-'));
    const feed = (expect: string) =>
      `schedule: "0 2 * * *"\nexpect: "${expect}"\ntimezone: Europe/Paris\nsource: { dir: /tmp, pattern: "*.csv" }\nmapping: m\n`;
    writeFileSync(join(dir, 'acme.yaml'), feed('0 7 * * *'));
    expect((await loadFeeds(dir))[0]).toMatchObject({ expect: '0 7 * * *', timezone: 'Europe/Paris' });
    writeFileSync(join(dir, 'acme.yaml'), feed('at seven'));
    await expect(loadFeeds(dir)).rejects.toThrow(/acme\.yaml:2: expect: must be a cron expression/);
  });
});
