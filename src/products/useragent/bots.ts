import { createIsBotFromList, list } from 'isbot';
import UAParser from 'ua-parser-js';

/**
 * The `is_bot` rule: isbot's own pattern list with the changes below, applied to the UA with
 * IIS-style `+` separators turned back into spaces. Corpus figures are in
 * test/products/useragent-bots.test.ts and its fixtures.
 */

/** isbot patterns we drop: each flags real browsers. */
export const REMOVED_PATTERNS: readonly string[] = [
  // Google Chrome Frame (2009-2014) was a plug-in for Internet Explorer 6-9 that added
  // `chromeframe` to the person's own IE User-Agent; it never sent requests on its own.
  'chromeframe',
  // FirePHP is a Firefox add-on for PHP developers: it appends `FirePHP/0.4` to the person's own
  // Firefox User-Agent.
  'firephp',
];

/** isbot patterns we narrow, each to the replacement beside it: the original flags real browsers or apps. */
export const NARROWED_PATTERNS: Readonly<Record<string, string>> = {
  // Apple News (`AppleNews/608.0.1 Version/2.0.1`) is the iOS news app, not a news crawler.
  // AppleNewsBot still matches `bot`.
  '(?:^|[^g])news(?!sapphire)': '(?:^|[^g])(?<!apple)news(?!sapphire)',
  // Google's apps and devices name Google too: the Google+ app (`com.google.GooglePlus/29676`),
  // Google TV, Google Goggles, "with Google Apps" builds, apps installed from the Play Store.
  '(?<! channel/|google/)google(?!(?:wv|app|/google| pixel))':
    '(?<! channel/|google/|google\\.|com\\.)google(?!(?:wv|app|/google| pixel|tv| tv|goggles|playstore| apps))',
};

/**
 * isbot patterns that guess from the shape of a UA (a bare product token, no space, a
 * `/1.0;`, a `|`) or a word that devices use too (`java` in J2ME phones, Nokia's `Radar`
 * phone), rather than from a bot's own name. When ua-parser finds a person's device (a phone,
 * tablet, TV, console or watch, with its vendor or model), or the UA names a TV, and only these
 * match, the UA is a browser or app on that device: feature phones send `SAMSUNG-SGH-Z400V`,
 * HbbTV sets `CE-HTML/1.0;`.
 */
export const SHAPE_PATTERNS: readonly string[] = [
  '^[\\w \\.\\-\\(?:\\):%]+(?:/v?\\d+(?:\\.\\d+)?(?:\\.\\d{1,10})*?)?(?:,|$)',
  '^[\\w\\-]+/[\\w]+$',
  '^\\w+/[\\w\\(\\)]*$',
  '^[^ ]{50,}$',
  '^[<\\(;]',
  '\\b\\w+/1\\.0;',
  ';\\s\\w+;$',
  '\\(\\)',
  '\\|',
  '^\\d+\\b',
  'java(?!;)',
  'radar',
];

/** Patterns we add: bots that name themselves but that isbot's list misses. */
export const ADDED_PATTERNS: readonly string[] = [
  'gtmetrix', // GTmetrix page-speed tests: "... Chrome/117.0.0.0 Safari/537.36 GTmetrix"
  'miniature\\.io/', // Miniature.io page-thumbnail service: "... Miniature.io/6.0 AppleWebKit/..."
  'turingos', // TuringOS content-analysis crawler: "(Macintosh; ...; TSM-turingos-1253296984)"
];

const removed = new Set(REMOVED_PATTERNS);
const shapes = new Set(SHAPE_PATTERNS);
const kept = list.filter((pattern) => !removed.has(pattern)).map((pattern) => NARROWED_PATTERNS[pattern] ?? pattern);
/** A bot's own name, or a word only bots use. */
const namesABot = createIsBotFromList([...kept.filter((pattern) => !shapes.has(pattern)), ...ADDED_PATTERNS]);
const hasABotShape = createIsBotFromList(kept.filter((pattern) => shapes.has(pattern)));
/**
 * The one shape pattern TV browsers' own tokens trip (HbbTV sets' `CE-HTML/1.0;`, checked on
 * uap-core's TV strings): a UA that names a TV is excused it, and only it; a TV word added to a
 * `java`, `|` or `()` UA leaves it a bot.
 */
const TV_SHAPE = '\\b\\w+/1\\.0;';
const hasANonTvShape = createIsBotFromList(kept.filter((pattern) => shapes.has(pattern) && pattern !== TV_SHAPE));

/** ua-parser device types that are a person's own device. */
const PERSONAL_DEVICES: ReadonlySet<string> = new Set(['mobile', 'tablet', 'wearable', 'smarttv', 'console']);

/**
 * Apple apps on a person's device, in forms ua-parser does not read as a vendor and model:
 * `4 Pics 1 Word/3.9 (iPad; iOS 7.0.2; Scale/2.00)`, `CFNetwork, iPhone OS 7.0, iPhone4,1`, and
 * the `App/1.0 CFNetwork/758.3.15 Darwin/15.4.0` that Apple's network library sends for an app.
 */
const NAMES_AN_APPLE_DEVICE = /\((?:iPad|iPhone|iPod(?: touch)?);|\biP(?:ad|hone|od)\d+,\d+\b|\bCFNetwork\/[\d.]+ Darwin\/\d/;

/**
 * A television or set-top box, named as TV browsers name themselves: the HbbTV standard's
 * `HbbTV/1.1.1`, CEA-2014's `CE-HTML/1.0`, `SmartTV` / `SMART-TV`, LG's `Web0S`, `webOS.TV`,
 * `NetCast` and `LG Browser/`, Philips' `NETTV/`, Sony's `BRAVIA`, Google TV's `Large Screen`,
 * and `TV Safari/`. ua-parser 1.x calls many of these phones, or finds no device at all (uap-core's
 * test strings: tests/test_device.yaml).
 */
export const NAMES_A_TV =
  /HbbTV\/\d|CE-HTML\/|smart-?tv|\bWeb0S\b|\bwebOS\.?TV|\bNetCast\b|\bLG Browser\/|\bNETTV\/|\bBRAVIA\b|\bGoogle ?TV\b|\bLarge Screen\b|\bTV Safari\//i;

/** What ua-parser says about the device, as the shape rule reads it. */
export interface ParsedDevice {
  type?: string;
  vendor?: string;
  model?: string;
}

const deviceParser = new UAParser();
function deviceOf(ua: string): ParsedDevice {
  deviceParser.setUA(ua);
  return deviceParser.getDevice();
}

/**
 * IIS W3C logs (and tools that read them) write each space of a User-Agent as `+`:
 * `Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64)+AppleWebKit/537.36+...`. A UA with a `+` but
 * no space at all is read as that encoding and given its spaces back; any other UA is
 * returned unchanged (real UAs with spaces may contain `+`, e.g. `AppleWebKit/537.3+`).
 * Without this, isbot's "50 or more characters without a space" pattern calls every such
 * browser a bot, and ua-parser loses the OS and often the browser.
 */
export function restoreSpaces(ua: string): string {
  return ua.includes('+') && !ua.includes(' ') ? ua.replaceAll('+', ' ') : ua;
}

/**
 * True for crawlers, bots, monitors, HTTP libraries and headless browsers; false for people's
 * browsers and apps.
 * @param device ua-parser's device for this UA, when the caller has parsed it already.
 */
export function isBot(ua: string, device?: ParsedDevice): boolean {
  const text = restoreSpaces(ua);
  if (namesABot(text)) return true;
  if (!hasABotShape(text)) return false;
  if (NAMES_AN_APPLE_DEVICE.test(text)) return false;
  if (NAMES_A_TV.test(text) && !hasANonTvShape(text)) return false;
  const { type, vendor, model } = device ?? deviceOf(text);
  return !(type !== undefined && PERSONAL_DEVICES.has(type) && (vendor !== undefined || model !== undefined));
}
