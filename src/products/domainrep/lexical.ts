/**
 * Signals read from the name alone, with no I/O: the shape of the site's label (length, digits,
 * hyphens, a random-looking string), internationalized labels (IDN, mixed scripts, characters
 * confusable with ASCII), look-alikes of a small list of often-imitated brands, the TLD's abuse
 * risk from the bundled table, and membership in the bundled phishing lists.
 *
 * The "label" is the site's own label under the whole public suffix list, private section
 * included: `paypal-login` for `paypal-login.pages.dev`, `example` for `www.example.co.uk`.
 */
import { domainToUnicode } from 'node:url';
import { parse } from 'tldts';
import type { Brand, PhishingLists, TldRiskTable } from './data.js';
import type { DomainRepSignal } from './types.js';

/** The parts of a checked name the lexical signals read. */
export interface NameParts {
  /** The normalized name (ASCII, punycode for IDN). */
  name: string;
  /** Its registrable domain under the ICANN section (`github.io` for `alice.github.io`). */
  registrable: string;
  /**
   * Its site: the registrable domain under the whole public suffix list (private suffixes
   * included); for a name that is itself a private suffix (`github.io`, `s3.amazonaws.com`),
   * which has none, its ICANN registrable domain (`github.io`, `amazonaws.com`).
   */
  site: string;
  /** The site's label: `site` without its own public suffix (`github` for `github.io`, `alice` for `alice.github.io`). */
  label: string;
  /** The labels in front of the site (`www`, `login.secure`), empty when none. */
  subdomain: string;
  /** The last label (`uk` for `example.co.uk`). */
  tld: string;
}

// --- the label's shape ------------------------------------------------------------------------

export const LEXICAL_WEIGHTS = {
  longLabel: 5, // 20-29 characters
  veryLongLabel: 10, // 30 or more
  digits: 5,
  twoHyphens: 5,
  manyHyphens: 10, // 3 or more
  randomLooking: 10,
  idn: 5,
  mixedScript: 25,
  confusable: 20,
} as const;

export function shapeSignals(parts: NameParts): DomainRepSignal[] {
  const signals: DomainRepSignal[] = [];
  const { label } = parts;
  const ascii = label.startsWith('xn--') ? null : label;
  if (label.length >= 30)
    signals.push({
      code: 'label_length',
      detail: `the label "${label}" is ${label.length} characters long (30 or more)`,
      weight: LEXICAL_WEIGHTS.veryLongLabel,
    });
  else if (label.length >= 20)
    signals.push({ code: 'label_length', detail: `the label "${label}" is ${label.length} characters long (20 or more)`, weight: LEXICAL_WEIGHTS.longLabel });

  if (ascii) {
    const digits = countMatches(ascii, /[0-9]/g);
    const letters = countMatches(ascii, /[a-z]/g);
    if (digits > 0 && letters > 0 && (digits >= 4 || (ascii.length >= 6 && digits / ascii.length >= 0.3))) {
      signals.push({ code: 'label_digits', detail: `the label mixes ${digits} digits with letters`, weight: LEXICAL_WEIGHTS.digits });
    }
  }
  const hyphens = countMatches(label.startsWith('xn--') ? label.slice(4) : label, /-/g);
  if (hyphens >= 3) signals.push({ code: 'label_hyphens', detail: `the label has ${hyphens} hyphens`, weight: LEXICAL_WEIGHTS.manyHyphens });
  else if (hyphens === 2) signals.push({ code: 'label_hyphens', detail: 'the label has 2 hyphens', weight: LEXICAL_WEIGHTS.twoHyphens });

  if (ascii && looksRandom(ascii)) {
    signals.push({
      code: 'label_entropy',
      detail: `the label looks random (${entropy(ascii).toFixed(2)} bits per character, few vowels or long consonant runs)`,
      weight: LEXICAL_WEIGHTS.randomLooking,
    });
  }
  return signals;
}

function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

/** Shannon entropy of the characters, in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * A machine-made label (DGA-like): 10 or more characters, entropy of 3.5 bits per character or
 * more, and either few vowels (under a quarter of the letters), a run of 5 consonants, or letters
 * and digits interleaved. Entropy alone flags ordinary long words (stackoverflow: 3.55).
 */
export function looksRandom(label: string): boolean {
  const plain = label.replace(/-/g, '');
  if (plain.length < 10 || entropy(plain) < 3.5) return false;
  const letters = plain.replace(/[0-9]/g, '');
  const vowels = countMatches(letters, /[aeiouy]/g);
  const fewVowels = letters.length > 0 && vowels / letters.length < 0.25;
  const consonantRun = /[bcdfghjklmnpqrstvwxz]{5,}/.test(letters);
  const interleaved = countMatches(plain, /[a-z][0-9]|[0-9][a-z]/g) >= 4;
  return fewVowels || consonantRun || interleaved;
}

// --- internationalized labels -----------------------------------------------------------------

const SCRIPTS: [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Georgian', /\p{Script=Georgian}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Thai', /\p{Script=Thai}/u],
  ['Devanagari', /\p{Script=Devanagari}/u],
  // Chinese, Japanese and Korean writing mixes these by nature: one group.
  ['CJK', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u],
];

function scriptsOf(text: string): Set<string> {
  const found = new Set<string>();
  for (const ch of text) {
    if (!/\p{L}/u.test(ch)) continue;
    const script = SCRIPTS.find(([, pattern]) => pattern.test(ch));
    found.add(script ? script[0] : 'Other');
  }
  return found;
}

/**
 * Characters that look like ASCII letters or digits, mapped to the ASCII they imitate: a small
 * hand-picked subset of Unicode's confusables (Cyrillic, Greek and Latin look-alikes), plus the
 * digit-for-letter swaps phishing names use. Letters with diacritics lose them first (NFD).
 */
const CONFUSABLES: Record<string, string> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'l',
  ї: 'l',
  ј: 'j',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ӏ: 'l',
  ɡ: 'g',
  ո: 'n',
  ս: 'u',
  օ: 'o',
  // Greek
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'l',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ω: 'w',
  // Latin look-alikes
  ı: 'l',
  ł: 'l',
  ƚ: 'l',
  ɩ: 'l',
  ɑ: 'a',
  ʀ: 'r',
  ѵ: 'v',
};
/** ASCII swaps folded into the skeleton: digits for letters, and `i` read as `l` (paypai). */
const ASCII_SWAPS: Record<string, string> = { '0': 'o', '1': 'l', i: 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b' };

/** What a label looks like: confusable characters and swaps mapped to ASCII, `rn` read as `m`, `vv` as `w`. */
export function skeleton(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFD').replace(/\p{M}/gu, '')) {
    const mapped = CONFUSABLES[ch] ?? ch;
    out += ASCII_SWAPS[mapped] ?? mapped;
  }
  return out.replace(/rn/g, 'm').replace(/vv/g, 'w');
}

/** The label as Unicode when it is punycode, else null. */
function unicodeLabel(label: string): string | null {
  if (!label.startsWith('xn--')) return null;
  const decoded = domainToUnicode(label);
  return decoded && decoded !== label ? decoded : null;
}

export function idnSignals(parts: NameParts): DomainRepSignal[] {
  const signals: DomainRepSignal[] = [];
  const idnLabels = parts.name.split('.').filter((l) => l.startsWith('xn--'));
  if (idnLabels.length === 0) return signals;
  signals.push({ code: 'idn', detail: `internationalized name: ${domainToUnicode(parts.name)}`, weight: LEXICAL_WEIGHTS.idn });
  const unicode = unicodeLabel(parts.label);
  if (!unicode) return signals;
  const scripts = scriptsOf(unicode);
  const cjkWithLatin = [...scripts].every((script) => script === 'Latin' || script === 'CJK');
  if (scripts.size >= 2 && !cjkWithLatin) {
    signals.push({
      code: 'mixed_script',
      detail: `the label "${unicode}" mixes ${[...scripts].sort().join(' and ')} letters`,
      weight: LEXICAL_WEIGHTS.mixedScript,
    });
  }
  // Accented Latin letters (bücher) are ordinary IDN; the brand check still reads them through the skeleton.
  const look = skeleton(unicode);
  if (/^[a-z0-9-]+$/.test(look) && [...scripts].some((script) => script !== 'Latin')) {
    signals.push({
      code: 'confusable',
      detail: `the label "${unicode}" is made of characters that look like ASCII: reads as "${look}"`,
      weight: LEXICAL_WEIGHTS.confusable,
    });
  }
  return signals;
}

// --- brand look-alikes ------------------------------------------------------------------------

export const BRAND_WEIGHTS = { homoglyph: 40, typo: 35, contains: 25, inSubdomain: 20, otherSuffix: 10 } as const;

/** Levenshtein distance, or `max + 1` once it is certainly larger than `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length];
}

/** Compiled brands: skeletons made once per engine. */
export interface BrandMatcher {
  match(parts: NameParts): DomainRepSignal | null;
}

export function createBrandMatcher(brands: readonly Brand[]): BrandMatcher {
  const compiled = brands.map((b) => ({ ...b, skeleton: skeleton(b.brand), own: new Set(b.domains) }));

  /**
   * Whether the name is the brand's own: its site is one of the brand's domains, or the name is
   * at or under one of them with no private suffix in between. A customer's site on a hosting
   * platform (`amazon-login.s3.amazonaws.com`: site and registrable differ) belongs to the
   * customer, not to the platform that listed `amazonaws.com`.
   */
  function ownedBy(brand: (typeof compiled)[number], parts: NameParts): boolean {
    if (brand.own.has(parts.site)) return true;
    if (parts.site !== parts.registrable) return false;
    for (const domain of brand.own) if (parts.name === domain || parts.name.endsWith(`.${domain}`)) return true;
    return false;
  }

  return {
    match(parts) {
      const unicode = unicodeLabel(parts.label) ?? parts.label;
      const hyphenTokens = unicode.split('-').filter(Boolean);
      const wordTokens = parts.label.split(/[-0-9]+/).filter(Boolean);
      const subLabels = parts.subdomain ? parts.subdomain.split(/[.-]/).filter(Boolean) : [];
      let best: DomainRepSignal | null = null;
      const consider = (signal: DomainRepSignal) => {
        if (!best || signal.weight > best.weight) best = signal;
      };
      for (const brand of compiled) {
        if (ownedBy(brand, parts)) continue;
        const name = brand.brand;
        for (const candidate of new Set([unicode, ...hyphenTokens])) {
          if (candidate === name) continue;
          if (candidate.length >= 4 && skeleton(candidate) === brand.skeleton) {
            consider({
              code: 'brand_lookalike',
              detail: `"${candidate}" imitates the brand "${name}" with look-alike characters`,
              weight: BRAND_WEIGHTS.homoglyph,
            });
            continue;
          }
          const max = name.length >= 9 ? 2 : name.length >= 5 ? 1 : 0;
          if (max > 0 && /^[a-z0-9]+$/.test(candidate) && editDistance(candidate, name, max) <= max) {
            consider({
              code: 'brand_lookalike',
              detail: `"${candidate}" is ${editDistance(candidate, name, max)} edit(s) from the brand "${name}"`,
              weight: BRAND_WEIGHTS.typo,
            });
          }
        }
        if (parts.label === name) {
          consider({
            code: 'brand_lookalike',
            detail: `uses the brand name "${name}" on ${parts.site}, which is not one of the brand's domains`,
            weight: BRAND_WEIGHTS.otherSuffix,
          });
        } else if (brand.match === 'substring' ? parts.label.includes(name) : wordTokens.includes(name)) {
          consider({ code: 'brand_lookalike', detail: `the label "${parts.label}" contains the brand "${name}"`, weight: BRAND_WEIGHTS.contains });
        }
        if (subLabels.includes(name)) {
          consider({ code: 'brand_lookalike', detail: `the brand "${name}" appears as a subdomain of ${parts.site}`, weight: BRAND_WEIGHTS.inSubdomain });
        }
      }
      return best;
    },
  };
}

// --- TLD risk and the phishing lists ----------------------------------------------------------

export function tldSignal(parts: NameParts, table: TldRiskTable): DomainRepSignal {
  const row = table.byTld.get(parts.tld);
  if (!row) {
    return {
      code: 'tld_risk',
      detail: `.${parts.tld}: fewer than ${table.minListed} domains in the bundled phishing lists, too few to judge (neutral)`,
      weight: 0,
    };
  }
  const share = `${(row.share * 100).toFixed(row.share >= 0.01 ? 1 : 2)}% of the ${table.listedDomains.toLocaleString('en-US')} listed phishing domains`;
  if (row.weight === 0)
    return { code: 'tld_risk', detail: `.${parts.tld}: ${share}, no more than its share of ordinary domains (lift ${row.lift})`, weight: 0 };
  return { code: 'tld_risk', detail: `.${parts.tld}: ${share}, ${row.lift} times its share of ordinary domains`, weight: row.weight };
}

export const PHISHING_LIST_WEIGHT = 60;

/**
 * The bundled lists' verdict on a name: listed itself, or under a listed parent; the allowlists
 * win. A parent that is the name's public suffix or above it (ICANN or private section, as
 * tldts knows them: `org.in`, `gb.net`, `servebeer.com`, `alwaysdata.net`) never matches: such a
 * listing would flag every site under the suffix, registered by anyone. It still matches the
 * name itself (`alwaysdata.net`, the hosting company's own host, as listed).
 */
export function phishingSignal(name: string, lists: PhishingLists): DomainRepSignal {
  const labels = name.split('.');
  const suffixes = labels.map((_, i) => labels.slice(i).join('.'));
  // polkadot's `*.parent` guards the parent and the names one label below it; MetaMask's whitelist covers subdomains.
  const wildcard = lists.allowedWildcard.has(name) || (labels.length > 2 && lists.allowedWildcard.has(suffixes[1]));
  if (lists.allowedExact.has(name) || wildcard || suffixes.some((s) => lists.allowed.has(s))) {
    return { code: 'phishing_list', detail: 'on an allowlist of the bundled phishing lists (allowlists win)', weight: 0 };
  }
  let publicSuffix: string | undefined;
  for (const suffix of suffixes) {
    const list = lists.blocked.get(suffix);
    if (!list) continue;
    if (suffix !== name) {
      // Only on a hit, so one parse at most per lookup; the name's suffix, private section included.
      publicSuffix ??= parse(name, { allowPrivateDomains: true, extractHostname: false }).publicSuffix ?? labels[labels.length - 1];
      if (suffix.length <= publicSuffix.length) break; // the suffix or a parent of it: so is every later one
    }
    return { code: 'phishing_list', detail: `${suffix === name ? name : `${suffix}, a parent of ${name},`} is on the ${list}`, weight: PHISHING_LIST_WEIGHT };
  }
  return { code: 'phishing_list', detail: 'not on the bundled phishing lists (MetaMask eth-phishing-detect, polkadot{.js} phishing)', weight: 0 };
}
