/** `seclookup serve --config FILE`: one JSON file for every setting, flags winning over it, bad settings refused at start by name. */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { readServeConfig } from '../../src/cli/config.js';
import { SERVE_OPTIONS } from '../../src/cli/serve.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

function configFile(settings: unknown): string {
  const path = join(temp.make(), 'seclookup.json');
  writeFileSync(path, typeof settings === 'string' ? settings : JSON.stringify(settings));
  return path;
}

describe('seclookup serve --config', () => {
  it("accepts the operator's guide's complete example file, every setting in it known", () => {
    const readme = readFileSync(new URL('../../docs/operators.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### One configuration for `serve`'));
    const example = /```json\n([\s\S]*?)```/.exec(section)![1];
    const config = readServeConfig(configFile(example), SERVE_OPTIONS, 'serve');
    expect(Object.keys(config.values)).toContain('redis');
    expect(Object.keys(config.products).sort()).toEqual(['emailauth', 'pwbreach', 'riskscore', 'useragent']);
  });

  it('takes its settings from the file (log level, body limit, product options); a flag wins over the file', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--json', '--db', db]);
    const risk = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'riskscore', '--json', '--db', db]);
    const path = configFile({
      'log-level': 'warn',
      'body-limit': 200,
      'trust-proxy': ['10.0.0.0/8'],
      products: { useragent: { cacheSize: 5 }, riskscore: { local: false } },
    });
    const { serve, baseUrl } = await startServe(db, { args: ['--config', path] });
    // The file's product options reach the engines: riskscore without its local data has no provider.
    const unconfigured = await fetch(`${baseUrl}/v1/riskscore/lookup?ip=8.8.8.8`, { headers: { authorization: `Bearer ${risk.secret_key}` } });
    expect([unconfigured.status, ((await unconfigured.json()) as { error_code: string }).error_code]).toEqual([503, 'upstream_unconfigured']);
    const post = (ua: string) =>
      fetch(`${baseUrl}/v1/useragent/lookup`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ua }),
      });
    expect((await post('curl/8.5')).status).toBe(200);
    const big = await post('x'.repeat(300));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error_code: string }).error_code).toBe('payload_too_large');
    await serve.stop('SIGTERM');
    expect(serve.requestLines()).toEqual([]); // log-level warn from the file

    const flagged = await startServe(db, { args: ['--config', path, '--log-level', 'info'] });
    expect((await fetch(`${flagged.baseUrl}/healthz`)).status).toBe(200);
    await flagged.serve.stop('SIGTERM');
    expect(flagged.serve.requestLines().length).toBeGreaterThan(0);
  });

  it('reads every setting from $SECLOOKUP_<FLAG> too, under the file', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--json', '--db', db]);
    const quiet = await startServe(db, { env: { SECLOOKUP_LOG_LEVEL: 'warn', SECLOOKUP_BODY_LIMIT: '50' } });
    const big = await fetch(`${quiet.baseUrl}/v1/useragent/lookup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ua: 'x'.repeat(100) }),
    });
    expect(big.status).toBe(413);
    await quiet.serve.stop('SIGTERM');
    expect(quiet.serve.requestLines()).toEqual([]);
    const fromFile = await startServe(db, { args: ['--config', configFile({ 'log-level': 'info' })], env: { SECLOOKUP_LOG_LEVEL: 'warn' } });
    await fetch(`${fromFile.baseUrl}/healthz`);
    await fromFile.serve.stop('SIGTERM');
    expect(fromFile.serve.requestLines().length).toBeGreaterThan(0);
  });

  it('product options: a flag wins over the file\'s "products" section, which wins over the environment (found by a reviewer)', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'scamrisk', '--json', '--db', db]);
    const path = configFile({ products: { scamrisk: { defaultRegion: 'US' } } });
    // A national number is read in the default region: its masked form says which one was used.
    const masked = async (args: string[], env: Record<string, string>) => {
      const { serve, baseUrl } = await startServe(db, { args: ['--config', path, ...args], env });
      const answer = await fetch(`${baseUrl}/v1/scamrisk/assess?type=phone&value=2025550123`, { headers: { authorization: `Bearer ${key.secret_key}` } });
      await serve.stop('SIGTERM');
      return ((await answer.json()) as { identifier: { masked: string } }).identifier.masked;
    };
    expect(await masked([], { SECLOOKUP_SCAMRISK_REGION: 'GB' })).toMatch(/^\+1\*/);
    expect(await masked(['--scamrisk-region', 'GB'], {})).toMatch(/^\+44\*/);
  });

  it('a broken file is named with where it breaks, never with the text around it (a key or a password may be there)', async () => {
    const result = await runCli(['serve', '--port', '0', '--db', join(temp.make(), 'x.db'), '--config', configFile('{"riskscore-key": tok_SUPERSECRET123}')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("not valid JSON (Unexpected token 'o')");
    expect(result.stderr).not.toContain('SUPERSE');
    const trailing = await runCli(['serve', '--port', '0', '--db', join(temp.make(), 'x.db'), '--config', configFile('{\n  "port": 0,\n}')]);
    expect(trailing.stderr).toContain('not valid JSON (Expected double-quoted property name at line 3, column 1)');
  });

  it.each([
    ['an unknown setting', { prot: 8080 }, 'setting "prot" is unknown'],
    ['a value of the wrong type', { port: true }, 'setting "port" must be a string or a number (got boolean)'],
    ['a list that is not one', { 'trust-proxy': 5 }, 'setting "trust-proxy" must be an array of strings'],
    ['a bad CIDR in a list', { 'trust-proxy': ['10.0.0.0/8', 'nonsense'] }, 'seclookup.json: "nonsense" is not an IP address or CIDR'],
    ['an unknown product', { products: { nosuch: {} } }, 'unknown product "nosuch"'],
    [
      'an unknown product option',
      { products: { geoip: { databse: 'x.mmdb' } } },
      'setting "products".geoip.databse is unknown; geoip\'s options are database, databases',
    ],
    ['an option of a product that has none', { products: { timezone: { cacheSize: 5 } } }, "timezone.cacheSize is unknown; timezone's options are none"],
    ['not a JSON object', '[1, 2]', 'the file must hold one JSON object of settings'],
    ['broken JSON', '{"port": ', '--config'],
    ['a DNS list naming no server', { dns: [','] }, 'names no DNS server'],
    [
      'one option set twice, flat and in "products" (the flat one won silently)',
      { 'scamrisk-region': 'GB', products: { scamrisk: { defaultRegion: 'US' } } },
      '"scamrisk-region" and "products.scamrisk.defaultRegion" both set scamrisk\'s defaultRegion; keep one',
    ],
  ])('refuses %s at start (exit 2), naming it', async (_name, settings, message) => {
    const result = await runCli(['serve', '--port', '0', '--db', join(temp.make(), 'x.db'), '--config', configFile(settings)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('refuses a bad product option at start (exit 2, before any engine is built), naming the product and the option', async () => {
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--db',
      join(temp.make(), 'x.db'),
      '--config',
      configFile({ products: { riskscore: { cacheSize: -1 } } }),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('riskscore cacheSize must be a whole number >= 0');
    expect(result.stderr).toContain('(from --riskscore-*, $SECLOOKUP_RISKSCORE_* or the config file\'s "products".riskscore)');
    // A product with no flags or variables of its own is not said to have them (found by a reviewer).
    const useragent = await runCli([
      'serve',
      '--port',
      '0',
      '--db',
      join(temp.make(), 'x.db'),
      '--config',
      configFile({ products: { useragent: { cacheSize: -1 } } }),
    ]);
    expect([useragent.code, useragent.stderr.trim().split('\n').at(-2)]).toEqual([
      2,
      'seclookup: useragent cacheSize must be a non-negative integer, got -1 (from the config file\'s "products".useragent)',
    ]);
    // The same for values flags give that only the product can judge (found by a reviewer: they exited 1 at engine build).
    for (const [args, message] of [
      [['--riskscore-provider', 'ipinfo', '--riskscore-key', 'k', '--riskscore-url', 'notaurl'], 'riskscore url must be an http(s) URL (got "notaurl")'],
      [['--riskscore-provider', 'ipinfo'], 'riskscore provider ipinfo needs a key'],
      [['--tls-timeout', '99999999999'], 'tls timeouts.totalMs must be at most 2147483647 milliseconds'],
    ] as const) {
      const refused = await runCli(['serve', '--port', '0', '--db', join(temp.make(), 'x.db'), ...args]);
      expect([refused.code, refused.stderr], args.join(' ')).toEqual([2, expect.stringContaining(message)]);
    }
  });

  it('refuses a shutdown deadline no timer can hold (2^31 ms or more), which cut every request at SIGTERM', async () => {
    const result = await runCli(['serve', '--port', '0', '--db', join(temp.make(), 'x.db')], { env: { SECLOOKUP_SHUTDOWN_DEADLINE_MS: '99999999999' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SECLOOKUP_SHUTDOWN_DEADLINE_MS must be a whole number from 1 to 2147483647 (got "99999999999")');
  });

  it('warns when a file every user may read holds a secret (an upstream key, a URL password), naming the settings, not their values', async () => {
    const path = configFile({ 'riskscore-key': 'tok_SUPERSECRET123', 'log-level': 'warn' });
    chmodSync(path, 0o644);
    const readable = await startServe(join(temp.make(), 'x.db'), { args: ['--config', path] });
    await readable.serve.stop('SIGTERM');
    expect(readable.serve.stderr).toContain(
      `seclookup: warning: --config ${path} has mode 0644 and holds secrets (riskscore-key): every user of this machine may read them`,
    );
    expect(readable.serve.stderr).not.toContain('SUPERSECRET');
    chmodSync(path, 0o600);
    const own = await startServe(join(temp.make(), 'x.db'), { args: ['--config', path] });
    await own.serve.stop('SIGTERM');
    expect(own.serve.stderr).not.toContain('holds secrets');
  });

  it('reads a file that starts with a byte order mark, as Notepad and PowerShell write it (found by a reviewer)', () => {
    const config = readServeConfig(configFile('\uFEFF{"port": 8081, "log-level": "warn"}'), SERVE_OPTIONS, 'serve');
    expect(config.values).toEqual({ port: '8081', 'log-level': 'warn' });
  });

  it('refuses a missing file', async () => {
    const result = await runCli(['serve', '--port', '0', '--config', join(temp.make(), 'none.json')]);
    expect([result.code, result.stderr]).toEqual([2, expect.stringContaining('no such file')]);
  });
});
