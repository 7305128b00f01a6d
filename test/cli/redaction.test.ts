/**
 * A URL's password never reaches a message: a Redis URL refused by `keys`, `serve` (flag,
 * environment, config file) or a `--mirror` refused by `data update` is quoted with `***` for
 * its password, even when it does not parse as a URL (a typo is when it gets quoted back).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redactUserinfo } from '../../src/lib/redact-url.js';
import { createTempDirs, runCli } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

const SECRET = 'S3cretPass';
/** Port 99999: no URL parser takes it, so the message quotes the text as given. */
const BAD_REDIS = `redis://:${SECRET}@host:99999/0`;

describe('redactUserinfo', () => {
  it.each([
    ['redis://:S3cretPass@host:99999/0', 'redis://:***@host:99999/0'],
    ['redis://user:S3cretPass@host:6379/0', 'redis://user:***@host:6379/0'],
    ['http://u:MIRSECRET@127.0.0.1:1 x', 'http://u:***@127.0.0.1:1 x'],
    ['https://TOKEN@mirror.example/x', 'https://***@mirror.example/x'],
    ['redis://:p@ss@host:1', 'redis://:***@host:1'],
    ['redis+cluster://u:pw@h1:1,h2:2', 'redis+cluster://u:***@h1:1,h2:2'],
    ['cannot fetch "http://a:b@h/x" and "http://c:d@h/y"', 'cannot fetch "http://a:***@h/x" and "http://c:***@h/y"'],
    // An @ in the path is no userinfo.
    ['http://example.com/a@b', 'http://example.com/a@b'],
    // Quotes and spaces in a password (unencoded: the URL then does not parse, and gets quoted back).
    [`via http://admin:s3cr'et@127.0.0.1:1/x`, 'via http://admin:***@127.0.0.1:1/x'],
    ['got "ftp://admin:s3cr"et@x/"', 'got "ftp://admin:***@x/"'],
    ['got `http://admin:s3`cr@x/`', 'got `http://admin:***@x/`'],
    ['got "http://admin:s3cr et@x/"', 'got "http://admin:***@x/"'],
    ['no url here: a@b.c', 'no url here: a@b.c'],
    // A password holding an unencoded `/`, `?` or `#`: the authority seems to end there (found by a reviewer).
    ['redis://admin:hun/ter2@127.0.0.1:6479/0', 'redis://admin:***@127.0.0.1:6479/0'],
    ['got "redis://u:4242/topsecret@h:1/0"', 'got "redis://u:***@h:1/0"'],
    ['redis://u:4242#topsecret@h:1', 'redis://u:***@h:1'],
    ['redis://:a?b@h:1 and http://example.com/c@d', 'redis://:***@h:1 and http://example.com/c@d'],
    // A hint's placeholder stays readable.
    ['give it in the URL, redis://:PASSWORD@host:port', 'give it in the URL, redis://:PASSWORD@host:port'],
    ['redis://USER:PASSWORD@host:port', 'redis://USER:PASSWORD@host:port'],
    ['redis://:password@host:port', 'redis://:***@host:port'],
  ])('%s', (text, redacted) => {
    expect(redactUserinfo(text)).toBe(redacted);
  });
});

describe('the CLI', () => {
  it('a --redis URL whose password holds an unencoded "/" is refused without the password', async () => {
    const result = await runCli(['keys', 'list', '--redis', 'redis://admin:hun/ter2@127.0.0.1:6479/0']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('ter2');
    expect(result.stderr).toContain('(got "redis://admin:***@127.0.0.1:6479/0")');
  });

  it('keys and plans: a bad --redis or $SECLOOKUP_REDIS is quoted without its password, and points at the command help', async () => {
    for (const [args, env, name] of [
      [['keys', 'list', '--redis', BAD_REDIS], {}, '--redis'],
      [['keys', 'list'], { SECLOOKUP_REDIS: BAD_REDIS }, '$SECLOOKUP_REDIS'],
      [['plans', 'list', '--redis', BAD_REDIS], {}, '--redis'],
    ] as const) {
      const result = await runCli([...args], { env: { ...env } });
      expect(result.code).toBe(2);
      expect(result.stderr).not.toContain(SECRET);
      expect(result.stderr).toContain(`${name} must be a URL such as redis://127.0.0.1:6379/0`);
      expect(result.stderr).toContain('(got "redis://:***@host:99999/0")');
      expect(result.stderr).toContain(`Run \`seclookup ${args[0]} --help\` for usage.`);
    }
  });

  it('serve: the same from a flag, the environment or the config file', async () => {
    const config = join(dirs.make(), 'serve.json');
    writeFileSync(config, JSON.stringify({ redis: BAD_REDIS, port: 0 }));
    for (const [args, env] of [
      [['serve', '--port', '0', '--redis', BAD_REDIS], {}],
      [['serve', '--port', '0'], { SECLOOKUP_REDIS: BAD_REDIS }],
      [['serve', '--config', config], {}],
    ] as const) {
      const result = await runCli([...args], { env: { ...env } });
      expect(result.code).toBe(2);
      expect(result.stderr).not.toContain(SECRET);
      expect(result.stderr).toContain('redis://:***@host:99999/0');
    }
  });

  it('a config file that is not JSON is quoted without a password', async () => {
    const config = join(dirs.make(), 'serve.json');
    writeFileSync(config, `{"redis": "redis://:${SECRET}@h:1/0" x}`);
    const result = await runCli(['serve', '--config', config]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain(SECRET);
  });

  it('data update: a --mirror that is not a URL is quoted without its password', async () => {
    const result = await runCli(['data', 'update', 'webhookip', '--mirror', 'http://u:MIRSECRET@127.0.0.1:1 x', '--data-dir', dirs.make()]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('MIRSECRET');
    expect(result.stderr).toContain('--mirror must be an http(s) URL (got "http://u:***@127.0.0.1:1 x")');
  });

  it('a URL a product refuses (--riskscore-url, --pwbreach-upstream) is quoted without its password, by lookup and by doctor, in one line', async () => {
    const riskscore = ['--riskscore-provider', 'ipinfo', '--riskscore-key', 'K', '--riskscore-url', 'http://u:RSSECRET@127.0.0.1:1 x'];
    const lookup = await runCli(['lookup', 'riskscore', '8.8.8.8', ...riskscore]);
    // A setting the product refuses is a usage error naming its flags, as for serve.
    expect(lookup.code).toBe(2);
    expect(lookup.stderr.split('\n')[0]).toBe(
      'seclookup: riskscore url must be an http(s) URL (got "http://u:***@127.0.0.1:1 x") (from --riskscore-* or $SECLOOKUP_RISKSCORE_*)',
    );
    const doctor = await runCli(['doctor', '--offline', ...riskscore]);
    expect(doctor.stderr).toBe('seclookup: cannot check the products: riskscore url must be an http(s) URL (got "http://u:***@127.0.0.1:1 x")\n');
    expect(doctor.code).toBe(1);
    const pwbreach = await runCli(['lookup', 'pwbreach', 'abc', '--pwbreach-upstream', 'http://u:PWSECRET@h:1/x']);
    expect(pwbreach.code).toBe(2);
    expect(pwbreach.stderr).not.toContain('PWSECRET');
    expect(pwbreach.stderr).toContain('(got "http://u:***@h:1/x")');
  });
});
