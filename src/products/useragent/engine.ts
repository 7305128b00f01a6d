import UAParser from 'ua-parser-js';
import { invalidOption, LookupError } from '../../errors.js';
import { createMemoryCache, createProductCache, type ProductCache } from '../../lib/cache.js';
import { checkCacheSizeLimit, describeValue } from '../../lib/option-checks.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult } from '../../lib/result-cache.js';
import { isBot, NAMES_A_TV, restoreSpaces } from './bots.js';
import { USER_AGENT_MAX_LENGTH, type UserAgentEngineOptions, type UserAgentResult } from './types.js';

/** What the cache keeps per User-Agent: the result and its JSON, made once. */
export type CachedUserAgent = CachedResult<UserAgentResult>;

export interface UserAgentEngine {
  /**
   * The User-Agent as it is parsed, cached and echoed: checked (LookupError
   * `invalid_user_agent` for a non-string, empty or whitespace-only input) and truncated to
   * {@link USER_AGENT_MAX_LENGTH} characters.
   */
  prepare(ua: string): string;
  /**
   * Parse a normalized User-Agent. Synchronous with the in-process cache (a promise only with
   * an async shared store). Every call returns a fresh object the caller may change freely.
   * Cost: one ua-parser-js parse plus isbot (tens of microseconds) on a miss; a map lookup
   * and a small copy on a hit.
   */
  lookup(ua: string): MaybePromise<LookupOutcome<UserAgentResult>>;
}

/**
 * The useragent engine: ua-parser-js 1.x for browser, OS, engine and device, isbot (with the
 * pattern changes in bots.ts) for `is_bot`, and a cache of parsed results keyed by the
 * truncated User-Agent.
 *
 * @param options.cacheSize entries of the private LRU made when no `cache` is given (default
 *   10000, about 1 KB each); 0 disables it.
 * @param cache the product cache to use instead (a shared store); null for none.
 */
export function createUserAgentEngine(options: UserAgentEngineOptions = {}, cache?: ProductCache<CachedUserAgent> | null): UserAgentEngine {
  const cacheSize = userAgentCacheSize(options.cacheSize);
  const store = cache !== undefined ? cache : cacheSize > 0 ? createProductCache<CachedUserAgent>(createMemoryCache({ maxEntries: cacheSize })) : null;
  const results = createResultCache(store, copyResult);
  // One parser, re-pointed per call: measured a few percent faster than `new UAParser(ua)`,
  // which builds a dozen closures each time. Safe because parsing is synchronous.
  const parser = new UAParser();
  // Parsing is a pure function of the UA: a result is kept until evicted.
  const lookupNormalized = (ua: string) => results.lookup(ua, () => ({ result: parse(parser, ua) }));

  const normalize = (input: string) => truncate(validate(input));
  return { prepare: normalize, lookup: lookupNormalized };
}

/** Entries of the useragent cache unless `cacheSize` says otherwise. */
export const USER_AGENT_CACHE_SIZE = 10_000;

/** The `cacheSize` option, checked (TypeError `invalid_option`): a whole number from 0 to MAX_CACHE_ENTRIES. */
export function userAgentCacheSize(value: unknown): number {
  const size = value ?? USER_AGENT_CACHE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw invalidOption(`useragent cacheSize must be a non-negative integer, got ${describeValue(value)}`);
  }
  return checkCacheSizeLimit(size, 'useragent cacheSize');
}

const NON_BLANK = /\S/;

function validate(input: unknown): string {
  if (typeof input !== 'string' || !NON_BLANK.test(input)) {
    throw new LookupError('invalid_user_agent', 'user agent must be a non-empty string');
  }
  return input;
}

/** Cut to USER_AGENT_MAX_LENGTH UTF-16 units, never between the halves of a surrogate pair. */
function truncate(ua: string): string {
  if (ua.length <= USER_AGENT_MAX_LENGTH) return ua;
  const last = ua.charCodeAt(USER_AGENT_MAX_LENGTH - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? USER_AGENT_MAX_LENGTH - 1 : USER_AGENT_MAX_LENGTH;
  return ua.slice(0, end);
}

function parse(parser: UAParser.UAParserInstance, ua: string): UserAgentResult {
  parser.setUA(restoreSpaces(ua));
  // The four parts we report; getResult() would also run the CPU regexes for nothing.
  const browser = parser.getBrowser();
  const engine = parser.getEngine();
  const os = parser.getOS();
  const device = parser.getDevice();
  const text = parser.getUA();
  // A Mac app's CFNetwork UA reads as iOS to ua-parser; its Darwin version is not an iOS one.
  const onAMac = MAC_CFNETWORK.test(text);
  const result: UserAgentResult = {
    user_agent: ua,
    browser: nameAndVersion(browser.name, browser.version),
    os: onAMac ? { name: 'Mac OS' } : osOf(os.name, os.version, text),
    device_type: onAMac ? 'desktop' : deviceType(device.type, os.name, text),
    is_bot: isBot(ua, device),
  };
  if (engine.name) result.engine = engine.name;
  return result;
}

/** Only the fields ua-parser recognised: no nulls, no empty strings, no version without a digit. */
function nameAndVersion(name: string | undefined, version: string | undefined): { name?: string; version?: string } {
  const out: { name?: string; version?: string } = {};
  if (name) out.name = name;
  // A version starts with a digit: ua-parser reads `WEBOS6.0` as WEBOS version `.0`.
  if (version && /^\d/.test(version)) out.version = version;
  return out;
}

/**
 * The OS, as nameAndVersion, with one correction: a Google Android app's UA
 * (`com.google.android.youtube/19.02.39 (Linux; U; Android 13; ...)`) reads as OS `android`,
 * version `.` to ua-parser 1.x; the UA says `Android 13`, so that is what is reported.
 */
function osOf(name: string | undefined, version: string | undefined, text: string): { name?: string; version?: string } {
  if (name === 'android' && !(version && /\d/.test(version))) return nameAndVersion('Android', ANDROID_VERSION.exec(text)?.[1]);
  return nameAndVersion(name, version);
}

const ANDROID_VERSION = /\bAndroid[ /]?(\d+(?:\.\d+)*)/i;

/**
 * OS names (lower-cased) that mean a desktop or laptop when ua-parser found no device type.
 * ua-parser 1.x reports a device type only for mobile, tablet, smarttv, console, wearable and
 * embedded; desktops come back with none, so the OS decides. Names are as ua-parser writes
 * them, and some keep the case of the input (`linux`, `LINUX`), hence the lower-casing.
 * Mobile OSes (Android, iOS, Windows Phone, Ubuntu Touch, KaiOS, ...) and TV/IoT systems
 * (Tizen, webOS, Chromecast, Fuchsia, Contiki) are deliberately absent: without a device type
 * they stay `unknown`. Limitation: iPadOS Safari sends a Macintosh UA and reads as desktop.
 */
const DESKTOP_OSES: ReadonlySet<string> = new Set([
  'windows',
  'mac os',
  'chromium os',
  'linux',
  'ubuntu',
  'kubuntu',
  'xubuntu',
  'lubuntu',
  'debian',
  'suse',
  'opensuse',
  'gentoo',
  'arch',
  'slackware',
  'fedora',
  'mandriva',
  'centos',
  'pclinuxos',
  'red hat',
  'redhat',
  'zenwalk',
  'linpus',
  'raspbian',
  'mint',
  'mageia',
  'vectorlinux',
  'deepin',
  'manjaro',
  'elementary os',
  'sabayon',
  'linspire',
  'gnu',
  'hurd',
  'freebsd',
  'openbsd',
  'netbsd',
  'pc-bsd',
  'ghostbsd',
  'bsd',
  'dragonfly',
  'solaris',
  'opensolaris',
  'aix',
  'hp-ux',
  'unix',
  'openvms',
  'plan 9',
  'minix',
  'haiku',
  'beos',
  'os/2',
  'amigaos',
  'morphos',
  'risc os',
  'serenityos',
]);

/**
 * An iPad named by an iOS app's UA: `(iPad; iOS 17.1; Scale/2.00)`, `(iPad2,1; iPad; U; CPU OS 6_1_3 ...)`,
 * Facebook's `FBMD/iPad;`, AdMob's `HW iPad1,1`. ua-parser reads most of these as the iPhone
 * they resemble (mobile).
 */
const NAMES_AN_IPAD = /\biPad(?:\d+,\d+)?\b/;
/**
 * A macOS app's CFNetwork UA: `Safari/12602.2.14.0.7 CFNetwork/807.1.3 Darwin/16.1.0 (x86_64)`,
 * `... Darwin/13.0.1 (x86_64) (MacBookPro11,1)`. iOS apps' CFNetwork UAs carry no CPU or Mac model.
 */
const MAC_CFNETWORK = /\bCFNetwork\/[\d.]+ Darwin\/[\d.]+ \((?:x86_64|i386|arm64)\)|\bDarwin\/[\d.]+ .*\((?:MacBook|Macmini|iMac|MacPro)[\w%,]*\)/;
/** Puffin's own device code after its version: `Puffin/3.10990IT` is iOS Tablet, `AT` Android tablet, `IP` / `AP` phones. */
const PUFFIN_DEVICE = /\bPuffin\/[\d.]+([IA][TP])\b/;

function deviceType(parsedType: string | undefined, osName: string | undefined, ua: string): string {
  // Only where ua-parser saw iOS or no OS at all: `(MSIE 9.0; Windows Phone OS 7.5; ...; HTC; iPad 3)` is a phone.
  if ((osName === 'iOS' || osName === undefined) && (parsedType === 'mobile' || parsedType === undefined) && NAMES_AN_IPAD.test(ua)) return 'tablet';
  const puffin = PUFFIN_DEVICE.exec(ua);
  if (puffin) return puffin[1].endsWith('T') ? 'tablet' : 'mobile';
  if ((parsedType === undefined || parsedType === 'mobile' || parsedType === 'tablet') && NAMES_A_TV.test(ua)) return 'smarttv';
  if (parsedType) return parsedType;
  if (osName && DESKTOP_OSES.has(osName.toLowerCase())) return 'desktop';
  return 'unknown';
}

/** A deep copy; measured at well under a microsecond, against tens for a parse. */
function copyResult(r: UserAgentResult): UserAgentResult {
  const out: UserAgentResult = {
    user_agent: r.user_agent,
    browser: { ...r.browser },
    os: { ...r.os },
    device_type: r.device_type,
    is_bot: r.is_bot,
  };
  if (r.engine !== undefined) out.engine = r.engine;
  return out;
}
