import { readFileSync } from 'node:fs';
import { isBot as plainIsbot, list as isbotList } from 'isbot';
import { describe, expect, it } from 'vitest';
import { ADDED_PATTERNS, isBot, REMOVED_PATTERNS, restoreSpaces } from '../../src/products/useragent/bots.js';
import { createUserAgentEngine } from '../../src/products/useragent/engine.js';

/** Fixture lines: one UA each, `#` lines are comments (see test/fixtures/useragent/SOURCES.md). */
function readFixture(name: string): string[] {
  return readFileSync(new URL(`../fixtures/useragent/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const browsers = readFixture('browsers.txt');
const crawlers = readFixture('crawlers.txt');

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
  it('calls at most 2% of real browser User-Agents bots', () => {
    expect(browsers.length).toBeGreaterThan(1000);
    const falseBots = browsers.filter((ua) => isBot(ua));
    expect(falseBots.length, falseBots.join('\n')).toBeLessThanOrEqual(Math.floor(browsers.length * 0.02));
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

describe('pattern changes stay meaningful against the installed isbot', () => {
  it('every removed pattern is one isbot still has', () => {
    expect(isbotList).toEqual(expect.arrayContaining([...REMOVED_PATTERNS]));
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
