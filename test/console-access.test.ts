import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { consoleAccess, isLoopback } from '../src/server/console-access.ts';

describe('the console is closed by default', () => {
  it('knows which addresses only this machine reaches', () => {
    for (const h of ['127.0.0.1', '127.3.2.1', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])
      expect(isLoopback(h), h).toBe(true);
    for (const h of [
      '0.0.0.0',
      '::',
      '[::]',
      '192.168.1.20',
      '10.0.0.1',
      'example.com',
      '::ffff:10.0.0.1',
      '128.0.0.1',
    ])
      expect(isLoopback(h), h).toBe(false);
  });

  it('listens on loopback without credentials, refuses another address unless told --insecure-no-auth (then warns)', () => {
    const open = loadConfig({});
    expect(consoleAccess(open, '127.0.0.1')).toEqual({});
    expect(() => consoleAccess(open, '0.0.0.0')).toThrow(
      /listen on 0\.0\.0\.0 without authentication.*CONSOLE_TOKEN.*CONSOLE_USER and CONSOLE_PASSWORD.*--insecure-no-auth/,
    );
    const insecure = consoleAccess(open, '0.0.0.0', { insecureNoAuth: true });
    expect(insecure.warning).toMatch(
      /^WARNING: the console listens on 0\.0\.0\.0 without authentication \(--insecure-no-auth\)/,
    );
    expect(insecure.token ?? insecure.basic).toBeUndefined();
  });

  it('takes a token or user and password anywhere, and refuses half of basic auth', () => {
    expect(consoleAccess(loadConfig({ CONSOLE_TOKEN: 't0ken-value' }), '0.0.0.0')).toEqual({ token: 't0ken-value' });
    expect(consoleAccess(loadConfig({ CONSOLE_USER: 'steward', CONSOLE_PASSWORD: 'p:ss' }), '::')).toEqual({
      basic: { user: 'steward', password: 'p:ss' },
    });
    expect(() => consoleAccess(loadConfig({ CONSOLE_USER: 'steward' }), '127.0.0.1')).toThrow(
      'CONSOLE_USER is set but CONSOLE_PASSWORD is not',
    );
    expect(() => consoleAccess(loadConfig({ CONSOLE_PASSWORD: 'p:ss' }), '0.0.0.0', { insecureNoAuth: true })).toThrow(
      'CONSOLE_PASSWORD is set but CONSOLE_USER is not',
    );
  });
});
