import { describe, expect, it } from 'vitest';
import { LookupError } from '../../src/errors.js';
import { createUserAgentEngine, type UserAgentEngine } from '../../src/products/useragent/engine.js';
import { isPromise } from '../../src/lib/outcome.js';

/** The engine over its in-process cache answers synchronously; these tests hold it to that. */
function syncEngine(engine: UserAgentEngine) {
  return {
    lookup(ua: string) {
      const outcome = engine.lookup(engine.prepare(ua));
      if (isPromise(outcome)) throw new Error('the in-process useragent engine answered with a promise');
      return outcome;
    },
  };
}
import { USER_AGENT_MAX_LENGTH } from '../../src/products/useragent/types.js';

const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  safariIphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  safariIpad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0',
  firefoxUbuntu: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  safariMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  chromeOs: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  firefoxFreebsd: 'Mozilla/5.0 (X11; FreeBSD amd64; rv:128.0) Gecko/20100101 Firefox/128.0',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36',
  tizenTv: 'Mozilla/5.0 (SMART-TV; Linux; Tizen 7.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/5.0 Chrome/94.0.4606.31 TV Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  curl: 'curl/8.5.0',
  headless: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36',
};

function expectCode(fn: () => unknown, code: string, status: number) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LookupError);
    expect((error as LookupError).code).toBe(code);
    expect((error as LookupError).status).toBe(status);
    return;
  }
  throw new Error(`expected LookupError ${code}`);
}

describe('useragent engine: real User-Agents', () => {
  const engine = syncEngine(createUserAgentEngine());
  const parse = (ua: string) => engine.lookup(ua).result;

  it('Chrome on Windows is a desktop browser', () => {
    expect(parse(UA.chromeWindows)).toEqual({
      user_agent: UA.chromeWindows,
      browser: { name: 'Chrome', version: '131.0.0.0' },
      os: { name: 'Windows', version: '10' },
      device_type: 'desktop',
      is_bot: false,
      engine: 'Blink',
    });
  });

  it('Safari on iPhone is mobile', () => {
    expect(parse(UA.safariIphone)).toEqual({
      user_agent: UA.safariIphone,
      browser: { name: 'Mobile Safari', version: '17.5' },
      os: { name: 'iOS', version: '17.5.1' },
      device_type: 'mobile',
      is_bot: false,
      engine: 'WebKit',
    });
  });

  it('Safari on iPad is a tablet', () => {
    const r = parse(UA.safariIpad);
    expect(r.device_type).toBe('tablet');
    expect(r.os).toEqual({ name: 'iOS', version: '17.4' });
  });

  it('Firefox on Linux is desktop, and so are other desktop OSes ua-parser names', () => {
    expect(parse(UA.firefoxLinux)).toMatchObject({
      browser: { name: 'Firefox', version: '131.0' },
      os: { name: 'Linux' },
      device_type: 'desktop',
      is_bot: false,
      engine: 'Gecko',
    });
    expect(parse(UA.firefoxUbuntu)).toMatchObject({ os: { name: 'Ubuntu' }, device_type: 'desktop' });
    expect(parse(UA.safariMac)).toMatchObject({ os: { name: 'Mac OS', version: '10.15.7' }, device_type: 'desktop' });
    expect(parse(UA.chromeOs)).toMatchObject({ os: { name: 'Chromium OS' }, device_type: 'desktop' });
    expect(parse(UA.firefoxFreebsd)).toMatchObject({ os: { name: 'FreeBSD' }, device_type: 'desktop' });
  });

  it('keeps the device type ua-parser found (mobile Android, smart TV on Linux-based Tizen)', () => {
    expect(parse(UA.chromeAndroid)).toMatchObject({ os: { name: 'Android', version: '14' }, device_type: 'mobile' });
    expect(parse(UA.tizenTv).device_type).toBe('smarttv');
  });

  it("a Google Android app's UA is Android with the version it says, never ua-parser's `android` `.` (found by a reviewer)", () => {
    const youtube = 'com.google.android.youtube/19.02.39 (Linux; U; Android 13; en_US; SM-S918B; Build/TP1A.220624.014) gzip';
    expect(parse(youtube)).toMatchObject({ os: { name: 'Android', version: '13' }, device_type: 'mobile' });
    const maps = 'com.google.android.apps.maps/11.112.0101 (Linux; U; Android 14; en_US; Pixel 7; Build/AP1A.240305.019.A1; Cronet/121.0.6167.178)';
    expect(parse(maps).os).toEqual({ name: 'Android', version: '14' });
    // No version at all in the UA: none reported, rather than a guess.
    expect(parse('com.google.android.gm/2024.01.01 (Linux; U; en_US)').os).not.toHaveProperty('version', '.');
  });

  it('Googlebot is a bot; unrecognised fields are omitted, not null', () => {
    const r = parse(UA.googlebot);
    expect(r.is_bot).toBe(true);
    expect(r).toEqual({ user_agent: UA.googlebot, browser: {}, os: {}, device_type: 'unknown', is_bot: true });
    expect('engine' in r).toBe(false);
  });

  it('curl is a bot with an unknown device', () => {
    expect(parse(UA.curl)).toEqual({ user_agent: 'curl/8.5.0', browser: {}, os: {}, device_type: 'unknown', is_bot: true });
  });

  it('HeadlessChrome is a bot', () => {
    expect(parse(UA.headless)).toMatchObject({ is_bot: true, browser: { name: 'Chrome Headless' }, device_type: 'desktop' });
  });

  it('no field is ever null or an empty string', () => {
    for (const ua of Object.values(UA)) {
      const json = JSON.stringify(parse(ua));
      expect(json).not.toContain('null');
      expect(json).not.toContain('""');
    }
  });
});

describe('useragent engine: input rules', () => {
  const engine = syncEngine(createUserAgentEngine());

  it('rejects non-strings, empty and whitespace-only input with invalid_user_agent (400)', () => {
    for (const bad of ['', ' ', '\t\n ', undefined, null, 42, {}, ['curl/8']]) {
      expectCode(() => engine.lookup(bad as unknown as string), 'invalid_user_agent', 400);
    }
  });

  it(`truncates to ${USER_AGENT_MAX_LENGTH} characters for parsing, caching and the echo`, () => {
    const long = UA.chromeWindows + ' ' + 'x'.repeat(1000);
    const first = engine.lookup(long);
    expect(first.result.user_agent).toHaveLength(USER_AGENT_MAX_LENGTH);
    expect(first.result.user_agent).toBe(long.slice(0, USER_AGENT_MAX_LENGTH));
    expect(first.result.browser).toEqual({ name: 'Chrome', version: '131.0.0.0' });
    // A different tail past the limit is the same lookup: served from the cache.
    const other = engine.lookup(long.slice(0, USER_AGENT_MAX_LENGTH) + 'y'.repeat(50));
    expect(other.cached).toBe(true);
    expect(other.result).toEqual(first.result);
    // Exactly at the limit nothing is cut.
    const exact = 'curl/8.5.0 ' + 'z'.repeat(USER_AGENT_MAX_LENGTH - 11);
    expect(engine.lookup(exact).result.user_agent).toBe(exact);
  });

  it('never cuts a surrogate pair in half', () => {
    const ua = 'a'.repeat(USER_AGENT_MAX_LENGTH - 1) + '😀' + 'tail';
    const echoed = engine.lookup(ua).result.user_agent;
    expect(echoed).toBe('a'.repeat(USER_AGENT_MAX_LENGTH - 1));
  });

  it('echoes the input untrimmed', () => {
    expect(engine.lookup('  curl/8.5.0').result.user_agent).toBe('  curl/8.5.0');
  });

  it('rejects a bad cacheSize', () => {
    expect(() => createUserAgentEngine({ cacheSize: -1 })).toThrow(expect.objectContaining({ name: 'TypeError', code: 'invalid_option' }));
    expect(() => createUserAgentEngine({ cacheSize: 1.5 })).toThrow(expect.objectContaining({ name: 'TypeError', code: 'invalid_option' }));
  });
});

describe('useragent engine: cache', () => {
  it('a repeat is a cache hit with an equal result', () => {
    const engine = syncEngine(createUserAgentEngine());
    const first = engine.lookup(UA.safariIphone);
    const second = engine.lookup(UA.safariIphone);
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.result).toEqual(first.result);
    expect(second.result).not.toBe(first.result);
  });

  it('mutating a returned result does not change later lookups', () => {
    const engine = syncEngine(createUserAgentEngine());
    const first = engine.lookup(UA.chromeWindows).result;
    const pristine = structuredClone(first);
    first.browser.name = 'Hacked';
    first.os.version = '0';
    first.device_type = 'toaster';
    first.is_bot = true;
    delete first.engine;
    const hit = engine.lookup(UA.chromeWindows);
    expect(hit.cached).toBe(true);
    expect(hit.result).toEqual(pristine);
    hit.result.browser.version = '1';
    expect(engine.lookup(UA.chromeWindows).result).toEqual(pristine);
  });

  it('evicts the least recently used entry at cacheSize', () => {
    const engine = syncEngine(createUserAgentEngine({ cacheSize: 2 }));
    engine.lookup(UA.curl);
    engine.lookup(UA.googlebot);
    engine.lookup(UA.curl); // curl is now the most recent
    engine.lookup(UA.headless); // evicts googlebot
    expect(engine.lookup(UA.curl).cached).toBe(true);
    expect(engine.lookup(UA.googlebot).cached).toBe(false);
  });

  it("hands out the result's JSON with it, unchanged by what a caller does to the result", () => {
    const engine = syncEngine(createUserAgentEngine());
    const first = engine.lookup(UA.googlebot);
    expect(first.json).toBe(JSON.stringify(first.result));
    first.result.browser.name = 'changed by the caller';
    const again = engine.lookup(UA.googlebot);
    expect(again.cached).toBe(true);
    expect(JSON.parse(again.json!)).toEqual(again.result);
    expect(again.result.browser.name).not.toBe('changed by the caller');
  });

  it('cacheSize 0 disables the cache', () => {
    const engine = syncEngine(createUserAgentEngine({ cacheSize: 0 }));
    engine.lookup(UA.curl);
    expect(engine.lookup(UA.curl)).toMatchObject({ cached: false, result: { is_bot: true } });
  });
});
