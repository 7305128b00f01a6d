/**
 * Property tests of the emailval format normalizer: it never throws on any string, it is
 * idempotent, and its output stays within the RFC 5321 limits and free of control characters.
 */
import { domainToASCII } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_ADDRESS_OCTETS,
  MAX_DOMAIN_OCTETS,
  MAX_INPUT_LENGTH,
  MAX_LOCAL_OCTETS,
  normalizeDomain,
  normalizeEmail,
  ECHO_LENGTH,
} from '../../src/products/emailval/normalize.js';
import { EMAIL_FORMAT_REASONS } from '../../src/products/emailval/types.js';
import { passesBidiAndJoinerRules } from '../../src/lib/idna.js';
import { atMost, equal, same } from '../cheap-expect.js';

const RUNS = { numRuns: 3_000 };
const CONTROL = /\p{Cc}/u;
const ASCII_HOST = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** Characters that exercise every rule: atext, dots, quotes, comments, brackets, spaces, controls, IDN letters, full-width forms, ignorables. */
const TRICKY = [
  ...'abcXYZ019.-_+!#$%&\'*/=?^`{|}~"()[]<>,;:\\@ ',
  '\t',
  '\n',
  '\r',
  '\0',
  '\x7f',
  '\x85',
  '\u00a0',
  '\u00ad',
  '\u200b',
  '\u200d',
  '\u202e',
  '\ufeff',
  '\ufffd',
  'é',
  'ü',
  'ı',
  'İ',
  'ß',
  'Ω',
  '中',
  '日本',
  '😀',
  '\ud800',
  'ａ',
  '．',
  '。',
  '＠',
  '／',
  '…',
  '\u0301',
  '٣',
];
const trickyText = fc.array(fc.constantFrom(...TRICKY), { maxLength: 40 }).map((parts) => parts.join(''));
/** Address-shaped inputs: tricky local, `@`, tricky domain, with surrounding whitespace sometimes. */
const addressLike = fc
  .tuple(fc.constantFrom('', ' ', '\t', '\u3000'), trickyText, fc.constantFrom('@', '@', '@@', ''), trickyText, fc.constantFrom('', '.com', '.example', ' '))
  .map(([pad, local, at, domain, tld]) => `${pad}${local}${at}${domain}${tld}${pad}`);
/** Mostly valid addresses: atext and Unicode letters in the local part, IDN, upper-case and full-width labels in the domain. */
const LOCAL_CHARS = [..."abcXYZ019-_+!#$%&'*/=?^`{|}~", 'é', 'ß', 'Ω', '中', '😀', '.'];
const LABEL_CHARS = [...'abcxyzABC019-', 'ü', 'é', 'ı', 'İ', 'ß', '中', 'ａ', '\u00ad'];
const label = fc.array(fc.constantFrom(...LABEL_CHARS), { minLength: 1, maxLength: 12 }).map((chars) => chars.join(''));
const nearlyValid = fc
  .tuple(
    fc.array(fc.constantFrom(...LOCAL_CHARS), { minLength: 1, maxLength: 70 }).map((chars) => chars.join('')),
    fc.array(label, { minLength: 1, maxLength: 4 }),
    fc.constantFrom('.', '.', '。', '．'),
    fc.constantFrom('com', 'ORG', 'example', 'xn--p1ai', 'рф', '123'),
  )
  .map(([local, labels, dot, tld]) => `${local}@${[...labels, tld].join(dot)}`);
const anyString = fc.oneof(
  nearlyValid,
  nearlyValid,
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  addressLike,
  fc.emailAddress(),
  fc.string({ minLength: 500, maxLength: 700 }),
);

describe('normalizeEmail properties', () => {
  it('treats exactly the Unicode Cc characters as control characters', () => {
    const wrong: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const char = String.fromCharCode(code);
      const answer = normalizeEmail(`a${char}b@example.com`);
      const refused = !answer.valid && answer.reason === 'control_characters';
      if (refused !== /\p{Cc}/u.test(char)) wrong.push(`U+${code.toString(16)} ${refused ? 'refused' : 'accepted'}`);
    }
    expect(wrong).toEqual([]);
  });

  it('never throws, and always answers a known shape', () => {
    fc.assert(
      fc.property(anyString, (input) => {
        const out = normalizeEmail(input);
        same(typeof out.email, 'string');
        same(typeof out.domain, 'string');
        if (!out.valid && !EMAIL_FORMAT_REASONS.includes(out.reason)) expect(EMAIL_FORMAT_REASONS).toContain(out.reason);
      }),
      RUNS,
    );
  });

  it('is idempotent: the email it answers normalizes to the same email and domain (and the same result when valid)', () => {
    fc.assert(
      fc.property(anyString, (input) => {
        const once = normalizeEmail(input);
        const twice = normalizeEmail(once.email);
        if (once.valid) equal(twice, once);
        else equal({ valid: twice.valid, email: twice.email, domain: twice.domain }, { valid: false, email: once.email, domain: once.domain });
      }),
      RUNS,
    );
  });

  it('answers a non-ASCII local part in NFC: one mailbox however its letters were composed (RFC 6532 3.1)', () => {
    const composed = normalizeEmail('J\u00f6e.\uac00@example.com'); // ö and the Hangul syllable GA, precomposed
    expect(composed).toEqual({ valid: true, email: 'J\u00f6e.\uac00@example.com', local: 'J\u00f6e.\uac00', domain: 'example.com' });
    expect(normalizeEmail('Jo\u0308e.\u1100\u1161@example.com')).toEqual(composed); // o + combining diaeresis, jamo G + A
    // Octets are counted in NFC: 32 decomposed ö (96 octets) are 64 octets, within the local part's 64.
    expect(normalizeEmail(`${'o\u0308'.repeat(32)}@example.com`)).toMatchObject({ valid: true, local: '\u00f6'.repeat(32) });
    fc.assert(
      fc.property(anyString, (input) => {
        const result = normalizeEmail(input);
        if (result.valid) same(result.local, result.local.normalize('NFC'));
      }),
      RUNS,
    );
  });

  it('keeps its output within the limits: octets, label shape, no control characters, bounded echoes', () => {
    fc.assert(
      fc.property(anyString, (input) => {
        const out = normalizeEmail(input);
        same(CONTROL.test(out.email), false);
        same(CONTROL.test(out.domain), false);
        if (out.valid) {
          same(out.email, `${out.local}@${out.domain}`);
          atMost(Buffer.byteLength(out.email), MAX_ADDRESS_OCTETS);
          atMost(Buffer.byteLength(out.local), MAX_LOCAL_OCTETS);
          atMost(out.domain.length, MAX_DOMAIN_OCTETS);
          if (!ASCII_HOST.test(out.domain)) expect(out.domain).toMatch(ASCII_HOST);
          same(out.local, input.trim().slice(0, input.trim().lastIndexOf('@'))); // case and characters kept
        } else {
          atMost(out.email.length, MAX_INPUT_LENGTH);
          atMost(out.domain.length, 2 * MAX_INPUT_LENGTH);
          if (input.trim().length > MAX_INPUT_LENGTH) {
            atMost(out.email.length, ECHO_LENGTH + 1);
            same(out.email.endsWith('…'), true);
          } else if (!CONTROL.test(input)) same(out.email, input.trim());
        }
      }),
      RUNS,
    );
  });

  it('accepts every address fast-check generates as RFC-valid within the length limits, domain lower-cased', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.boolean(), (address, upper) => {
        const at = address.lastIndexOf('@');
        const input = upper ? `${address.slice(0, at)}@${address.slice(at + 1).toUpperCase()}` : address;
        const out = normalizeEmail(input);
        const tooLong = Buffer.byteLength(address) > MAX_ADDRESS_OCTETS || at > MAX_LOCAL_OCTETS;
        if (tooLong) return;
        const local = address.slice(0, at);
        const domain = address.slice(at + 1).toLowerCase();
        equal(out, { valid: true, email: `${local}@${domain}`, local, domain });
      }),
      RUNS,
    );
  });
});

/** normalizeDomain without its fast path: always through domainToASCII, then the same checks. */
function referenceDomain(text: string): string | { reason: string } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at NUL on purpose, as in normalize.ts
  if (text === '' || /[\x00-\x2c\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/.test(text)) return { reason: 'invalid_domain' };
  const ascii = domainToASCII(text);
  const labels = ascii.split('.');
  if (ascii !== '' && !passesBidiAndJoinerRules(text)) return { reason: 'invalid_domain' };
  if (ascii === '' || ascii.length > MAX_DOMAIN_OCTETS || /^(?:[0-9]+|0x[0-9a-f]*)$/.test(labels[labels.length - 1])) return { reason: 'invalid_domain' };
  if (!labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return { reason: 'invalid_domain' };
  return labels.length < 2 ? { reason: 'single_label_domain' } : ascii;
}

describe('normalizeDomain', () => {
  it('answers as domainToASCII plus the host-name checks would, on ASCII and mixed input (its fast path changes nothing)', () => {
    const asciiChars = fc.constantFrom(...'aAzZ09x-.', 'xn--', 'XN--', '0x', 'é', 'ü');
    const domain = fc.array(asciiChars, { maxLength: 30 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(domain, fc.domain(), fc.string({ maxLength: 20 })), (text) => {
        equal(normalizeDomain(text), referenceDomain(text));
      }),
      { numRuns: 8_000 },
    );
  });

  it.each([
    ['Example.COM', 'example.com'],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`], // 253 octets
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['ＥＸＡＭＰＬＥ．com', 'example.com'],
    ['example。com', 'example.com'],
    ['ex\u00adample.com', 'example.com'],
    ['ab--cd.example', 'ab--cd.example'],
    // Right-to-left labels that keep IDNA's Bidi rule, and a ZWJ where Devanagari spells with it.
    ['אב.com', 'xn--4dbc.com'],
    ['xn--4dbc.com', 'xn--4dbc.com'],
    ['क्\u200dष.com', 'xn--11b2ezcw70k.com'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it.each([
    ['', 'invalid_domain'],
    ['a_b.example', 'invalid_domain'],
    ['ａ＿ｂ.example', 'invalid_domain'],
    ['example.com:25', 'invalid_domain'],
    ['xn--abc.example', 'invalid_domain'],
    ['0x7f.1', 'invalid_domain'],
    ['1.2.3.4', 'invalid_domain'],
    ['example.123', 'invalid_domain'],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, 'invalid_domain'], // 254 octets
    ['example', 'single_label_domain'],
    ['123', 'invalid_domain'],
    ['example.0x1F', 'invalid_domain'],
    // Found by a reviewer: domainToASCII converts these, but IDNA refuses them. Latin and Hebrew
    // in one label, a right-to-left label starting with a digit (RFC 5893), either as punycode,
    // and a ZWJ between two Latin letters (RFC 5892 CONTEXTJ).
    ['aא.com', 'invalid_domain'],
    ['1א.com', 'invalid_domain'],
    ['xn--a-0hc.com', 'invalid_domain'],
    ['a\u200db.com', 'invalid_domain'],
  ])('%j -> %s', (input, reason) => {
    expect(normalizeDomain(input)).toEqual({ reason });
  });
});
