/**
 * A range: every hash under one 5-hex-digit prefix with its count, from the local store or an
 * upstream range API; and the range API's text format (`SUFFIX:COUNT` lines, CRLF), padded on
 * request as Have I Been Pwned pads it.
 */
import { randomBytes } from 'node:crypto';
import { SeclookupError } from '../../errors.js';
import { HEX_VALUE, SUFFIX_HEX, suffixHex } from './hash.js';

export interface BreachRange {
  /** Hashes in the range (padding never counts). */
  readonly size: number;
  /** The count of a full hash whose prefix is this range's; 0 when it is not in the range. */
  count(hash: Uint8Array): number;
  /** `SUFFIX:COUNT` lines, ascending by suffix, upper-case hex, no padding. */
  lines(): string[];
}

/** Padding as Have I Been Pwned adds it: to at least 800 entries, then 0-200 more. */
export const PADDING_MIN = 800;
export const PADDING_EXTRA = 200;

/**
 * The range in the public API's text format: lines joined by CRLF, no line break after the last.
 * With `padding`, fake suffixes with count 0 are mixed in (in order) until there are at least
 * 800 entries, then a random 0-200 more, so the answer's size says nothing about the prefix.
 */
export function rangeText(range: BreachRange, padding: boolean): string {
  const lines = range.lines();
  if (!padding) return lines.join('\r\n');
  const fakes = Math.max(0, PADDING_MIN - lines.length) + randomInt(PADDING_EXTRA + 1);
  const taken = new Set(lines.map((line) => line.slice(0, SUFFIX_HEX)));
  const padded: string[] = [];
  const bytes = randomBytes(18 * fakes);
  for (let i = 0; i < fakes; i++) {
    let suffix = bytes
      .toString('hex', 18 * i, 18 * i + 18)
      .slice(1)
      .toUpperCase();
    while (taken.has(suffix)) suffix = randomBytes(18).toString('hex').slice(1).toUpperCase();
    taken.add(suffix);
    padded.push(`${suffix}:0`);
  }
  padded.sort();
  return mergeSorted(lines, padded).join('\r\n');
}

function randomInt(below: number): number {
  return randomBytes(4).readUInt32BE(0) % below;
}

/** Two ascending lists of lines (by their fixed-width suffix) as one. */
function mergeSorted(a: string[], b: string[]): string[] {
  const out: string[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] < b[j] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}

/**
 * A range answered by a range API, kept as its text with the padding removed and the suffixes
 * in upper case, CRLF between lines: the form the range cache holds (a JSON-safe string, about
 * 40 bytes per hash). A lookup is one `indexOf` of `SUFFIX:`: suffixes are fixed-width hex and
 * counts are digits followed by a line break, so a match can only start at a line's start.
 */
export function textRange(text: string): BreachRange {
  const size = text === '' ? 0 : countLines(text);
  return {
    size,
    count(hash) {
      const at = text.indexOf(`${suffixHex(hash)}:`);
      if (at < 0) return 0;
      let end = text.indexOf('\r', at + SUFFIX_HEX + 1);
      if (end < 0) end = text.length;
      return Number(text.slice(at + SUFFIX_HEX + 1, end));
    },
    lines: () => (text === '' ? [] : text.split('\r\n')),
  };
}

function countLines(text: string): number {
  let n = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

/** A range answer without a line: a failure that may pass (see `parseRangeAnswer`). */
export class EmptyRangeError extends SeclookupError {}

/**
 * Read a range API's answer: `SUFFIX:COUNT` lines (35 hex digits in either case, a decimal
 * count), separated by CRLF or LF, blank lines ignored. Lines with count 0 are padding and
 * dropped. Anything else makes the whole answer malformed (SeclookupError `upstream_failed`):
 * half an answer is never trusted. So does an answer without a single line, padding included
 * (`EmptyRangeError`): every request asks for padding, so only something broken on the way (a
 * proxy, a captive portal, a mirror) answers nothing, and read as a range it would say "not
 * breached" for a whole prefix. A byte-order mark before the first line (a mirror's files saved
 * by a Windows editor) is skipped. Returns the cacheable text (see `textRange`).
 */
export function parseRangeAnswer(body: string): string {
  if (body.charCodeAt(0) === 0xfeff) body = body.slice(1);
  const out: string[] = [];
  let sorted = true;
  let previous = '';
  let lineNumber = 0;
  let lines = 0;
  for (const raw of body.split('\n')) {
    lineNumber++;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '') continue;
    if (
      line.length < SUFFIX_HEX + 2 ||
      line.charCodeAt(SUFFIX_HEX) !== 0x3a ||
      !isHex(line, SUFFIX_HEX) ||
      !isDigits(line, SUFFIX_HEX + 1) ||
      line.length > SUFFIX_HEX + 1 + 15
    ) {
      throw new SeclookupError('upstream_failed', `the range answer is malformed at line ${lineNumber}`);
    }
    lines++;
    const count = Number(line.slice(SUFFIX_HEX + 1));
    if (count === 0) continue;
    const suffix = line.slice(0, SUFFIX_HEX).toUpperCase();
    if (suffix <= previous) sorted = false;
    previous = suffix;
    out.push(`${suffix}:${count}`);
  }
  if (lines === 0) throw new EmptyRangeError('upstream_failed', 'the range answer is empty (no hash, no padding)');
  if (!sorted) {
    out.sort();
    // A suffix listed twice keeps its largest count (the store's rule for duplicates).
    for (let i = out.length - 1; i > 0; i--) {
      if (out[i].slice(0, SUFFIX_HEX) !== out[i - 1].slice(0, SUFFIX_HEX)) continue;
      const keep = Math.max(Number(out[i].slice(SUFFIX_HEX + 1)), Number(out[i - 1].slice(SUFFIX_HEX + 1)));
      out.splice(i - 1, 2, `${out[i].slice(0, SUFFIX_HEX)}:${keep}`);
    }
  }
  return out.join('\r\n');
}

function isHex(text: string, length: number): boolean {
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code > 255 || HEX_VALUE[code] < 0) return false;
  }
  return true;
}

function isDigits(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}
