import { createIsBotFromList, list } from 'isbot';

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
];

/** Patterns we add: bots that name themselves but that isbot's list misses. */
export const ADDED_PATTERNS: readonly string[] = [
  'gtmetrix', // GTmetrix page-speed tests: "... Chrome/117.0.0.0 Safari/537.36 GTmetrix"
  'miniature\\.io/', // Miniature.io page-thumbnail service: "... Miniature.io/6.0 AppleWebKit/..."
  'turingos', // TuringOS content-analysis crawler: "(Macintosh; ...; TSM-turingos-1253296984)"
];

const removed = new Set(REMOVED_PATTERNS);
const matchesBotPattern = createIsBotFromList([...list.filter((pattern) => !removed.has(pattern)), ...ADDED_PATTERNS]);

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

/** True for crawlers, bots, monitors, HTTP libraries and headless browsers; false for people's browsers. */
export function isBot(ua: string): boolean {
  return matchesBotPattern(restoreSpaces(ua));
}
