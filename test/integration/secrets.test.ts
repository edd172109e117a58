import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { runImport } from '../../src/pipeline/run/run.ts';
import { addSecret, redact } from '../../src/redact.ts';
import { contextFromConfig } from '../../src/runtime.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';

// An API that echoes what it was sent: every create is refused with a problem body quoting the Authorization header
// and the token; the run's API URL carries `user:password@`. None of it may reach a report file or a journal.
const TOKEN = 'ps-live-7f3c9a1e5b2d';
const USER = 'steward';
const PASSWORD = 'hunter2-Pa55';
let sandbox: RunningSandbox;
let echo: Server;
let echoUrl: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  // Forwards to the sandbox (with the sandbox's own token), except creates: 400, the request's credentials echoed.
  echo = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const auth = String(req.headers.authorization ?? '');
        if (req.method === 'POST' && /\/api\/tradeItem$/i.test(req.url ?? '')) {
          res.writeHead(400, { 'content-type': 'application/problem+json' });
          res.end(
            JSON.stringify({
              type: 'about:blank',
              title: `Bad request (Authorization: ${auth})`,
              status: 400,
              errors: [
                {
                  code: 'invalid',
                  property: 'gtin',
                  message: `refused for ${auth}; token ${auth.slice(7)} has no rights`,
                  detail: null,
                },
              ],
            }),
          );
          return;
        }
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const headers: Record<string, string> = { authorization: 'Bearer sandbox-token', accept: 'application/json' };
        if (body) headers['content-type'] = String(req.headers['content-type'] ?? 'application/json');
        const r = await fetch(`${sandbox.url}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      })().catch((err: Error) => {
        res.writeHead(502);
        res.end(err.message);
      });
    });
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  echoUrl = `127.0.0.1:${(echo.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => echo?.close(r));
  await sandbox?.close();
});

/** Every text file a run leaves: reports, run.json, chunk journals and results (XLSX read as their cells). */
async function everything(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (p.endsWith('.xlsx')) {
        const wb = new ExcelJS.Workbook();
        await wb.xlsx.readFile(p);
        const cells: string[] = [];
        wb.worksheets[0]!.eachRow((r) => r.eachCell((c) => cells.push(String(c.value))));
        out[p] = cells.join('\n');
      } else out[p] = readFileSync(p, 'utf8');
    }
  };
  await walk(dir);
  return out;
}

describe('credentials never reach reports or journals', () => {
  it('redacts Bearer tokens, Authorization values, URL userinfo and registered secrets', () => {
    addSecret('a-registered-secret');
    expect(
      redact('POST https://u:p%40ss@api.example.com/api/tradeItem → 400: gtin: Authorization: Bearer abc.DEF-123'),
    ).toBe('POST https://[redacted]@api.example.com/api/tradeItem → 400: gtin: Authorization: Bearer [redacted]');
    expect(redact('{"authorization":"Basic dXNlcjpwYXNz"}')).toBe('{"authorization":"[redacted]"}');
    expect(redact('token a-registered-secret, again a-registered-secret')).toBe('token [redacted], again [redacted]');
    expect(redact('client_secret=xyz&access_token=abc')).toBe('client_secret=[redacted]&access_token=[redacted]');
    // Ordinary text is left alone, and redacting twice changes nothing.
    for (const t of ['Basic information', 'mail bob@example.com', 'http://host/a@b', 'Bearer [redacted]'])
      expect(redact(t)).toBe(t);
  });

  it('an import against an API that echoes them leaves no credential in rows.*, rejected.*, summary.json or the journals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-secrets-'));
    const sheet = writeProductSheet(dir, 6, { owner: DEMO_COMPANY_ID });
    const config = loadConfig({
      PRODUCT_API_URL: `http://${USER}:${PASSWORD}@${echoUrl}`,
      REFERENCE_API_URL: sandbox.url,
      API_TOKEN: TOKEN,
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'silent',
    });
    const cc = await contextFromConfig(config, {});
    try {
      const r = await runImport({ file: sheet.file, mapping: sheet.mapping }, cc.ctx);
      expect(r.summary.counts.failed).toBe(6);
      const files = await everything(r.reportDir);
      const names = Object.keys(files).map((f) => f.slice(r.reportDir.length + 1));
      expect(names).toEqual(
        expect.arrayContaining(['rows.csv', 'rows.xlsx', 'rejected.csv', 'rejected.xlsx', 'summary.json']),
      );
      expect(names.some((n) => /^chunks\/.*\.journal\.jsonl$/.test(n))).toBe(true);
      for (const [file, text] of Object.entries(files)) {
        for (const secret of [TOKEN, PASSWORD, `${USER}:`])
          expect(text.includes(secret), `${secret} in ${file}`).toBe(false);
      }
      // The API's words are still there, with the credentials taken out: in rejected.csv, which tells a rejected row's
      // issues in full (rows.csv names them).
      const rejected = files[join(r.reportDir, 'rejected.csv')]!;
      expect(rejected).toContain(
        `POST http://[redacted]@${echoUrl}/api/tradeItem → 400: gtin: refused for Bearer [redacted]; token [redacted] has no rights`,
      );
      const journals = Object.entries(files)
        .filter(([f]) => f.endsWith('.journal.jsonl'))
        .map(([, t]) => t)
        .join('\n');
      expect(journals).toContain('[redacted]');
    } finally {
      await cc.close();
    }
    expect(existsSync(join(dir, 'reports'))).toBe(true);
  }, 60_000);
});
