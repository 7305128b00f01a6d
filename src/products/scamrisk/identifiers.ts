/**
 * Validation, normalization and masking of each identifier type (README: scamrisk, types).
 * Synchronous and free of I/O: the API runs it before quota is reserved. Every refusal is
 * LookupError `invalid_identifier`.
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { domainToUnicode } from 'node:url';
import { LookupError } from '../../errors.js';
import { parseDomainName, type DomainName } from '../../lib/domain.js';
import { notRoutableReason, parseIpInput, type IpInput } from '../../lib/ip-input.js';
import { normalizeEmail, type ValidEmail } from '../emailval/normalize.js';
import { CHAIN_NAMES, parseCryptoAddress, type CryptoAddress } from './crypto.js';
import type { IdentifierType } from './types.js';

export interface PhoneInfo {
  e164: string;
  country: string | null;
  valid: boolean;
  /** libphonenumber's type (`MOBILE`, `PREMIUM_RATE`, ...); null when unknown. */
  kind: string | null;
}

export interface Identifier {
  type: IdentifierType;
  /** The key reports are filed under and caches use. */
  normalized: string;
  masked: string;
  email?: ValidEmail;
  phone?: PhoneInfo;
  ip?: IpInput;
  crypto?: CryptoAddress;
  /** Domain and URL hosts (a URL whose host is an IP address has `ip` instead). */
  domain?: DomainName;
  url?: { href: string; hasCredentials: boolean };
}

/**
 * The version of the normalized forms below. Bump it whenever one changes: the SQLite report
 * database then re-files its stored reports under the new forms, once, when it next opens for
 * writing (reports.ts), so reports filed before still count. 1: `twitter:` filed as `x:`; URLs
 * without user information, with RFC 3986 percent-encoding normalization and an IPv4-mapped IPv6
 * host as IPv4; e-mail local parts and addresses in NFC; SS58 addresses by public key.
 */
export const NORMALIZATION_VERSION = 1;

const MAX_INPUT = 2048;
const USERNAME = /^[a-z0-9._-]{1,64}$/;
/** Ours: optional platform prefixes of a username (`telegram:alice`), kept in the normalized form. */
export const USERNAME_PLATFORMS = [
  'telegram',
  'twitter',
  'x',
  'instagram',
  'facebook',
  'tiktok',
  'discord',
  'github',
  'reddit',
  'whatsapp',
  'signal',
  'skype',
  'snapchat',
  'youtube',
  'linkedin',
] as const;

function refuse(type: IdentifierType, why: string): LookupError {
  return new LookupError('invalid_identifier', `not a valid ${type}: ${why}`);
}

/** Normalize `value` as an identifier of `type`; throws LookupError `invalid_identifier`. */
export function parseIdentifier(type: IdentifierType, value: string, options: { region?: string } = {}): Identifier {
  if (value.length > MAX_INPUT) throw refuse(type, `longer than ${MAX_INPUT} characters`);
  // Trimmed first: a value copied from a file or a spreadsheet often ends in a newline or CR.
  const text = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is what this regex is for
  if (/[\u0000-\u001f\u007f-\u009f]/.test(text) && type !== 'address') throw refuse(type, 'control characters');
  if (text === '') throw refuse(type, 'empty');
  switch (type) {
    case 'email':
      return email(text);
    case 'phone':
      return phone(text, options.region);
    case 'ip':
      return ip(text);
    case 'username':
      return username(text);
    case 'address':
      return address(value);
    case 'crypto':
      return crypto(text);
    case 'domain':
      return domain(text);
    case 'url':
      return url(text);
  }
}

function email(text: string): Identifier {
  const parsed = normalizeEmail(text);
  if (!parsed.valid) throw refuse('email', parsed.reason);
  // NFC first (RFC 6532 3.1): `jöe` typed precomposed or with a combining diaeresis is one mailbox.
  // NFC again after lower-casing, which can leave a letter and a mark NFC composes (`T\u0308`).
  const local = parsed.local.normalize('NFC').toLowerCase().normalize('NFC');
  // Masked from the normalized form: results are cached by it, so the first caller's casing must not show in another's answer.
  return { type: 'email', normalized: `${local}@${parsed.domain}`, masked: maskEmail(local, parsed.domain), email: parsed };
}

/** No-break spaces and Unicode dashes, as a number copied from a web page has them: read as a space and a hyphen. */
const TYPOGRAPHIC_SPACES = /[\u00a0\u2007\u202f]/g;
const TYPOGRAPHIC_DASHES = /[\u2010-\u2015\u2212]/g;

function phone(written: string, region: string | undefined): Identifier {
  const text = written.replace(TYPOGRAPHIC_SPACES, ' ').replace(TYPOGRAPHIC_DASHES, '-');
  if (!/^\+?[0-9 ().\-/]{3,40}$/.test(text)) throw refuse('phone', 'digits, spaces, ()-./ and a leading + only');
  if (!text.startsWith('+') && !region) throw refuse('phone', 'no country: start with + and the country code, or give a region');
  const parsed = parsePhoneNumberFromString(text, region ? { defaultCountry: region.toUpperCase() as CountryCode } : undefined);
  if (!parsed || !parsed.isPossible()) throw refuse('phone', 'not a possible number');
  const e164 = parsed.number as string;
  const info: PhoneInfo = { e164, country: parsed.country ?? null, valid: parsed.isValid(), kind: parsed.getType() ?? null };
  return { type: 'phone', normalized: e164, masked: maskPhone(e164, parsed.countryCallingCode), phone: info };
}

function ip(text: string): Identifier {
  let parsed: IpInput;
  try {
    parsed = parseIpInput(text);
  } catch {
    throw refuse('ip', 'not an IPv4 or IPv6 address');
  }
  if (notRoutableReason(parsed)) throw refuse('ip', 'not publicly routable');
  return { type: 'ip', normalized: parsed.ip, masked: maskIp(parsed), ip: parsed };
}

/** Platforms known by two names: the second is filed under the first (Twitter is X since 2023; one account, one identifier). */
export const PLATFORM_ALIASES: Readonly<Record<string, string>> = { twitter: 'x' };

function username(text: string): Identifier {
  let platform = '';
  let name = text.toLowerCase();
  const colon = name.indexOf(':');
  if (colon > 0) {
    platform = name.slice(0, colon);
    if (!(USERNAME_PLATFORMS as readonly string[]).includes(platform)) throw refuse('username', `unknown platform prefix ${JSON.stringify(platform)}`);
    platform = PLATFORM_ALIASES[platform] ?? platform;
    name = name.slice(colon + 1);
  }
  name = name.replace(/^@/, '');
  if (!USERNAME.test(name)) throw refuse('username', '1 to 64 of a-z 0-9 . _ - (after an optional platform: and @)');
  const normalized = platform ? `${platform}:${name}` : name;
  return { type: 'username', normalized, masked: (platform ? `${platform}:` : '') + maskWord(name) };
}

/** Runs of white space and control characters, which an address keeps as one space. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this regex is for
const SPACES_AND_CONTROLS = /[\s\u0000-\u001f\u007f-\u009f]+/g;

function address(value: string): Identifier {
  const normalized = value
    .normalize('NFC')
    .replace(SPACES_AND_CONTROLS, ' ')
    .trim()
    .toLowerCase()
    .normalize('NFC') // again: lower-casing can leave a letter and a mark NFC composes
    .replace(/\s*,\s*/g, ', ');
  if (normalized.length < 8) throw refuse('address', 'shorter than 8 characters');
  if (normalized.length > 300) throw refuse('address', 'longer than 300 characters');
  if (!/\p{L}/u.test(normalized)) throw refuse('address', 'no letters');
  const masked = normalized.replace(/[\p{L}\p{N}]+/gu, (word) => maskWord(word));
  return { type: 'address', normalized, masked };
}

function crypto(text: string): Identifier {
  const parsed = parseCryptoAddress(text);
  if (!parsed) throw refuse('crypto', 'not an address of a supported chain (btc, evm, trx, ltc, doge, dash, zec, bch, btg, xmr, xrp, dot)');
  // A failing checksum is a mistyped or altered address: assessing it would score a wallet nobody owns.
  if (!parsed.checksumValid) throw refuse('crypto', `bad checksum for ${CHAIN_NAMES[parsed.chain]} address (mistyped or altered)`);
  return { type: 'crypto', normalized: parsed.normalized, masked: maskMiddle(parsed.normalized), crypto: parsed };
}

function domain(text: string): Identifier {
  let parsed: DomainName;
  try {
    parsed = parseDomainName(text);
  } catch (error) {
    throw refuse('domain', error instanceof Error ? error.message : 'not a domain name');
  }
  return { type: 'domain', normalized: parsed.name, masked: maskDomain(parsed), domain: parsed };
}

function url(text: string): Identifier {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw refuse('url', 'not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refuse('url', 'only http and https URLs');
  parsed.hash = '';
  const hasCredentials = parsed.username !== '' || parsed.password !== '';
  // User information is no part of the page (`https://paypal.com:login@evil.com/` is evil.com's):
  // out of the key, so one page is one identifier and no password reaches the report database
  // or the cache key. The credentials_in_url signal comes from hasCredentials.
  parsed.username = '';
  parsed.password = '';
  // RFC 3986 6.2.2.2 (an empty query is dropped too: `?` alone adds nothing). Order, case and
  // trailing slashes otherwise stay: a server may tell them apart.
  parsed.pathname = normalizePercentEncoding(parsed.pathname);
  parsed.search = normalizePercentEncoding(parsed.search);
  const host = parsed.hostname;
  const tail = parsed.pathname === '/' && parsed.search === '' ? '' : '/...';
  if (host.startsWith('[') || /^[0-9.]+$/.test(host)) {
    const address = host.replace(/^\[|\]$/g, '');
    let ipInput: IpInput;
    try {
      ipInput = parseIpInput(address);
    } catch {
      throw refuse('url', 'the host is not a valid address');
    }
    // The address as the ip type writes it: an IPv4-mapped IPv6 host (`[::ffff:93.184.216.34]`) is the IPv4 host.
    parsed.hostname = ipInput.version === 4 ? ipInput.ip : `[${ipInput.ip}]`;
    return {
      type: 'url',
      normalized: parsed.href,
      masked: `${parsed.protocol}//${ipInput.version === 6 ? `[${maskIp(ipInput)}]` : maskIp(ipInput)}${tail}`,
      ip: ipInput,
      url: { href: parsed.href, hasCredentials },
    };
  }
  let name: DomainName;
  try {
    name = parseDomainName(host);
  } catch (error) {
    throw refuse('url', `the host: ${error instanceof Error ? error.message : 'not a domain'}`);
  }
  // The host as the domain type has it (`evil-shop.com.` is `evil-shop.com`): one page, one identifier.
  if (parsed.hostname !== name.name) parsed.hostname = name.name;
  return {
    type: 'url',
    normalized: parsed.href,
    masked: `${parsed.protocol}//${maskDomain(name)}${tail}`,
    domain: name,
    url: { href: parsed.href, hasCredentials },
  };
}

/** Unreserved characters (RFC 3986 2.3): percent-encoding one changes nothing. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * RFC 3986 6.2.2.1-2: a percent-encoded unreserved character decoded (`%7E` -> `~`, `%41` ->
 * `A`), every other escape with upper-case hex (`%2f` -> `%2F`). Reserved characters stay
 * encoded (`%2F` is not `/`).
 */
function normalizePercentEncoding(text: string): string {
  if (!text.includes('%')) return text;
  // A `%` that starts no escape is the character itself, `%25`: written so, a decoded character
  // after it cannot make a new escape (`%%341` would become `%41`, then `A`: two keys for one URL).
  return text.replace(/%(?![0-9A-Fa-f]{2})/g, '%25').replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

// Masking (README: masking). Each keeps enough to recognise the identifier, never all of it.

/** First character then `***`; a one-character word becomes `*`. */
export function maskWord(word: string): string {
  const chars = [...word];
  return chars.length <= 1 ? '*' : `${chars[0]}***`;
}

function maskEmail(local: string, domain: string): string {
  return `${maskWord(local)}@${domain}`;
}

function maskPhone(e164: string, callingCode: string): string {
  const national = e164.slice(1 + callingCode.length);
  return `+${callingCode}${'*'.repeat(Math.max(national.length - 2, 1))}${national.slice(-2)}`;
}

/** IPv4 without its last octet; IPv6 as its first 3 of 8 groups (expanded: `2a00::1` would show whole). */
function maskIp(input: IpInput): string {
  if (input.version === 4) return input.ip.replace(/\.\d+$/, '.*');
  return `${input.address.parts
    .slice(0, 3)
    .map((part) => part.toString(16))
    .join(':')}:*`;
}

/** First 6 and last 4 characters. */
function maskMiddle(text: string): string {
  return text.length > 12 ? `${text.slice(0, 6)}...${text.slice(-4)}` : `${text.slice(0, 2)}***`;
}

/** Subdomains as `*.`, the registrable label as its first character and `***`, the suffix kept. */
function maskDomain(name: DomainName): string {
  const label = name.registrable.slice(0, -(name.publicSuffix.length + 1));
  const sub = name.name === name.registrable ? '' : '*.';
  return `${sub}${maskWord(label)}.${name.publicSuffix}`;
}

/** The Unicode form of a (punycode) host, for confusable checks. */
export function unicodeHost(name: string): string {
  return domainToUnicode(name) || name;
}
