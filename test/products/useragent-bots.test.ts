import { readFileSync } from 'node:fs';
import { isBot as plainIsbot, list as isbotList } from 'isbot';
import { describe, expect, it } from 'vitest';
import { ADDED_PATTERNS, isBot, NARROWED_PATTERNS, REMOVED_PATTERNS, restoreSpaces, SHAPE_PATTERNS } from '../../src/products/useragent/bots.js';
import { createUserAgentEngine } from '../../src/products/useragent/engine.js';

/** Fixture lines: one UA each, `#` lines are comments (see test/fixtures/useragent/SOURCES.md). */
function readFixture(name: string): string[] {
  return readFileSync(new URL(`../fixtures/useragent/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const browsers = readFixture('browsers.txt');
const uapBrowsers = readFixture('browsers-uap.txt');
const crawlers = readFixture('crawlers.txt');

/** The misclassifications found for issue 23, one per row of misclassified.tsv. */
const misclassified = readFixture('misclassified.tsv').map((line) => {
  const [field, expected, before, source, ua] = line.split('\t');
  return { field: field as 'device_type' | 'is_bot', expected, before, source, ua };
});

const UA = {
  ie8ChromeFrame:
    'Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.0; Trident/4.0; chromeframe; SLCC1; .NET CLR 2.0.50727; .NET CLR 3.5.30729; .NET CLR 3.0.30729)',
  plusSpacedChrome: 'Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64)+AppleWebKit/537.36+(KHTML,+like+Gecko)+Chrome/120.0.0.0+Safari/537.36',
  plusSpacedBot: 'Mozilla/5.0+(compatible;+PiplBot;+http://www.pipl.com/bot/)',
  googleWebPreview: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google Web Preview) Chrome/27.0.1453 Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  curl: 'curl/8.5.0',
  headlessChrome: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36',
  gtmetrix: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/117.0.0.0 Safari/537.36 GTmetrix',
  blackberry: 'Mozilla/5.0 (BB10; Touch) AppleWebKit/537.3+ (KHTML, like Gecko) Version/10.0.9.386 Mobile Safari/537.3+',
};

describe('is_bot on the fixture corpora', () => {
  it('calls at most 0.5% of 11,000+ real browser User-Agents bots (plain isbot: about 2%)', () => {
    const corpus = [...browsers, ...uapBrowsers];
    expect(corpus.length).toBeGreaterThan(11_000);
    const falseBots = corpus.filter((ua) => isBot(ua));
    expect(falseBots.length, falseBots.join('\n')).toBeLessThanOrEqual(Math.floor(corpus.length * 0.005));
    expect(corpus.filter((ua) => plainIsbot(ua)).length).toBeGreaterThan(corpus.length * 0.015);
    expect(browsers.filter((ua) => isBot(ua)).length).toBeLessThanOrEqual(Math.floor(browsers.length * 0.005));
  });

  it('finds at least 99.7% of the public crawler list', () => {
    expect(crawlers.length).toBeGreaterThan(2000);
    const missed = crawlers.filter((ua) => !isBot(ua));
    expect(missed.length, missed.join('\n')).toBeLessThanOrEqual(Math.floor(crawlers.length * 0.003));
  });

  it('calls none of the corpus IE + Chrome Frame or +-spaced browsers a bot', () => {
    const kinds = browsers.filter((ua) => ua.includes('chromeframe') || (ua.includes('+') && !ua.includes(' ')));
    expect(kinds.length).toBeGreaterThanOrEqual(10);
    expect(kinds.filter((ua) => isBot(ua))).toEqual([]);
  });

  it('finds at least as many crawlers as plain isbot, and every one plain isbot finds', () => {
    const ours = crawlers.filter((ua) => isBot(ua)).length;
    const plain = crawlers.filter((ua) => plainIsbot(ua)).length;
    expect(ours).toBeGreaterThanOrEqual(plain);
    expect(crawlers.filter((ua) => plainIsbot(ua) && !isBot(ua))).toEqual([]);
  });
});

describe('is_bot on named User-Agents', () => {
  it.each([
    { name: 'IE8 with Chrome Frame', ua: UA.ie8ChromeFrame, bot: false },
    { name: 'Chrome logged with + for spaces', ua: UA.plusSpacedChrome, bot: false },
    { name: 'BlackBerry 10 (+ beside spaces)', ua: UA.blackberry, bot: false },
    { name: 'Google Web Preview', ua: UA.googleWebPreview, bot: true },
    { name: 'Googlebot', ua: UA.googlebot, bot: true },
    { name: 'curl (HTTP libraries are bots)', ua: UA.curl, bot: true },
    { name: 'HeadlessChrome', ua: UA.headlessChrome, bot: true },
    { name: 'a bot logged with + for spaces', ua: UA.plusSpacedBot, bot: true },
    { name: 'GTmetrix (added pattern)', ua: UA.gtmetrix, bot: true },
  ])('$name: is_bot $bot', ({ ua, bot }) => {
    expect(isBot(ua)).toBe(bot);
  });
});

describe('the misclassification table (test/fixtures/useragent/misclassified.tsv)', () => {
  const engine = createUserAgentEngine({ cacheSize: 0 });

  it('has device and bot rows, each a change from what the engine answered before', () => {
    expect(misclassified.filter((row) => row.field === 'device_type').length).toBeGreaterThanOrEqual(10);
    expect(misclassified.filter((row) => row.field === 'is_bot').length).toBeGreaterThanOrEqual(10);
    expect(misclassified.filter((row) => row.before === row.expected)).toEqual([]);
  });

  it.each(misclassified.map((row) => [row.field, row.expected, row.source, row]))('%s %s: %s', async (_field, _expected, _source, row) => {
    const { result } = await engine.lookup(engine.prepare(row.ua));
    expect(String(result[row.field])).toBe(row.expected);
  });
});

describe('what the narrower rules still call a bot or a phone', () => {
  it.each([
    ['Storebot-Google', 'Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.88 Safari/537.36'],
    ['Google-InspectionTool', 'Mozilla/5.0 (compatible; Google-InspectionTool/1.0)'],
    ['a news crawler (crawlers.txt)', 'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT) NewsNow/1.0'],
    ['a bare library token, no device', 'okhttp/4.9.0'],
    ['a J2ME bot on a phone UA that names itself', 'BlackBerry9000/4.6.0.167 Profile/MIDP-2.0 Configuration/CLDC-1.1 VendorID/102 ips-agent'],
  ])('%s is a bot', (_name, ua) => {
    expect(isBot(ua)).toBe(true);
  });

  it('a Windows Phone that names an iPad in its UA stays a phone', async () => {
    const engine = createUserAgentEngine({ cacheSize: 0 });
    const ua = 'Mozilla/5.0 (compatible; MSIE 9.0; Windows Phone OS 7.5; Trident/5.0; IEMobile/9.0; HTC; iPad 3)';
    expect((await engine.lookup(engine.prepare(ua))).result.device_type).toBe('mobile');
  });

  it("today's LG webOS TVs are TVs, and a version that does not start with a digit is left out (a reviewer's strings)", async () => {
    const engine = createUserAgentEngine({ cacheSize: 0 });
    const webos6 =
      'Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.79 Safari/537.36 DMOST/2.0.0 (; LGE; webOSTV; WEBOS6.3.2 03.34.95; W6_lm21a;)';
    const hbbtv = 'HbbTV/1.5.1 (+DRM;LGE;OLED55C14LB;WEBOS6.0 03.20.82;W6_lm21u;DTV_W21U;)';
    expect((await engine.lookup(engine.prepare(webos6))).result).toMatchObject({ device_type: 'smarttv', is_bot: false, browser: { name: 'Chrome' } });
    const { result } = await engine.lookup(engine.prepare(hbbtv));
    expect([result.device_type, result.is_bot, result.os]).toEqual(['smarttv', false, { name: 'WEBOS' }]);
  });

  it('a TV word added to a UA isbot flags by its shape (java, |, (), a leading digit or <) leaves it a bot (a reviewer found it excused)', () => {
    const shaped = ['Java/17.0.2', 'Java/1.8.0_151', 'a|b', '1234 foo', '<script>', 'Mozilla/5.0 ()', 'Mozilla/5.0 (X11; Linux x86_64) Java/1.8'];
    for (const ua of shaped) {
      expect(isBot(ua), ua).toBe(true);
      for (const tv of [' SmartTV', ' HbbTV/1.0', ' (SMART-TV)', ' Web0S']) expect(isBot(ua + tv), ua + tv).toBe(true);
    }
    // What a TV trips by itself, its CE-HTML/1.0; token, stays excused.
    expect(isBot('Opera/9.80 (Linux armv6l; U; NETRANGEMMH;HbbTV/1.1.1;CE-HTML/1.0;PEAQ LF1V359; en) Presto/2.10.250 Version/11.60')).toBe(false);
  });

  it('a phone whose app names a TV brand in passing stays a phone; a desktop browser stays a desktop', async () => {
    const engine = createUserAgentEngine({ cacheSize: 0 });
    const phone = 'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36';
    expect((await engine.lookup(engine.prepare(phone))).result.device_type).toBe('mobile');
    const desktop = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
    expect((await engine.lookup(engine.prepare(desktop))).result.device_type).toBe('desktop');
  });

  it('a Mac app on CFNetwork reads as Mac OS, not the iOS ua-parser assumes', async () => {
    const engine = createUserAgentEngine({ cacheSize: 0 });
    const { result } = await engine.lookup(engine.prepare('Safari/9537.71 CFNetwork/673.0.2 Darwin/13.0.1 (x86_64) (MacBookPro11,1)'));
    expect([result.os, result.device_type]).toEqual([{ name: 'Mac OS' }, 'desktop']);
  });
});

describe('pattern changes stay meaningful against the installed isbot', () => {
  it('every removed, narrowed or shape pattern is one isbot still has', () => {
    expect(isbotList).toEqual(expect.arrayContaining([...REMOVED_PATTERNS, ...Object.keys(NARROWED_PATTERNS), ...SHAPE_PATTERNS]));
  });

  it('no added pattern is one isbot already has (drop ours once upstream adds it)', () => {
    expect(ADDED_PATTERNS.filter((pattern) => isbotList.includes(pattern))).toEqual([]);
  });
});

describe('restoreSpaces', () => {
  it('turns + back into spaces only when the UA has no space at all', () => {
    expect(restoreSpaces(UA.plusSpacedChrome)).toBe(
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    );
    expect(restoreSpaces(UA.blackberry)).toBe(UA.blackberry);
    expect(restoreSpaces(UA.curl)).toBe(UA.curl);
  });

  it('the engine parses the spaced text but reports the UA as given', async () => {
    const engine = createUserAgentEngine();
    const { result } = await engine.lookup(engine.prepare(UA.plusSpacedChrome));
    expect(result).toEqual({
      user_agent: UA.plusSpacedChrome,
      browser: { name: 'Chrome', version: '120.0.0.0' },
      os: { name: 'Windows', version: '10' },
      device_type: 'desktop',
      is_bot: false,
      engine: 'Blink',
    });
  });
});
