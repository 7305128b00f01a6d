/**
 * The tls input: a host, with or without a scheme, a port and a path, normalized to the name
 * (or address) and port to check. Synchronous and free of I/O: the API runs it before quota is
 * reserved. Whether the host may be connected to is the outbound guard's question, asked in
 * the lookup (it needs DNS).
 */
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { LookupError, quoteInput } from '../../errors.js';
import { formatIp, parseIp } from '../../lib/ip.js';

/** A checked target. */
export interface TlsTarget {
  /** Lower-case ASCII hostname (punycode for IDN, no trailing dot), or a canonical IP address (no brackets). */
  host: string;
  /** True when `host` is an IP address: then no SNI is sent. */
  literal: boolean;
  port: number;
  /** `host:port`, with brackets around IPv6: the cache key. */
  key: string;
}

export const DEFAULT_PORT = 443;
/** Raw input longer than this is refused before any parsing (a URL to a host needs far less). */
export const MAX_INPUT_LENGTH = 2048;
const MAX_NAME_LENGTH = 253;
/**
 * A hostname of labels of letters, digits, hyphens and underscores (real hostnames carry
 * them), 1 to 63 each, none starting or ending with a hyphen; checked in one pass.
 */
const HOSTNAME = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
/** ASCII other than `a-z 0-9 . - _` (after lower-casing): `%`, `\`, `*`, `@`, spaces, ... would be reinterpreted or are not hostnames. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at NUL on purpose
const BAD_ASCII = /[\x00-\x2c\x2f\x3a-\x5e\x60\x7b-\x7f]/;
/** Plain ASCII with no punycode label: IDN mapping would return it unchanged. */
const PLAIN_ASCII = /^[a-z0-9._-]*$/;
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
/** A port as decimal text: 1 to 5 digits, no leading zero (then checked against 65535). */
export const PORT_TEXT = /^[1-9][0-9]{0,4}$/;

/**
 * Read a host and an optional port (the `port` parameter) into a target.
 *
 * Accepted: `example.com`, `example.com:8443`, `https://example.com/path?q#f`,
 * `http://example.com` (still port 443), `Bücher.example` (to punycode), `93.184.215.14`,
 * `[2001:db8::1]:443`, `2001:db8::1` (a bare IPv6 address, no port).
 *
 * LookupError `invalid_host` (400): missing, too long, a scheme other than http(s), user
 * information (`user:pass@`), bad brackets, a port that is not 1-65535 in plain decimal, a port
 * in the host that disagrees with the `port` parameter, a name that is not LDH labels after IDN
 * mapping, an IPv6 zone id. LookupError `host_not_allowed` (422): `localhost` and names under
 * it, and numeric names some resolvers read as IPv4 (`127.1`, `0x7f.1`).
 */
export function parseTarget(input: unknown, portOption?: number | string): TlsTarget {
  if (typeof input !== 'string' || input.trim() === '') throw invalid('a host is required');
  if (input.length > MAX_INPUT_LENGTH) throw invalid(`host is longer than ${MAX_INPUT_LENGTH} characters`);
  let rest = input.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing spaces and control characters is what this regex is for
  if (/[\u0000-\u0020\u007f]/.test(rest)) throw invalid(`${quoteInput(rest)} contains spaces or control characters`);

  const scheme = SCHEME.exec(rest);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name !== 'https' && name !== 'http') throw invalid(`only https:// (or http://) URLs are accepted, not ${name}://`);
    rest = rest.slice(scheme[0].length);
  } else if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest.includes('\\')) throw invalid(`${quoteInput(input.trim())} is not a host`);
  // The path, query and fragment are not part of the host.
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority.includes('@')) throw invalid('user information (user:password@) is not accepted in the host');
  if (authority === '') throw invalid('a host is required');

  const { host: rawHost, port: portText, bracketed } = splitAuthority(authority);
  const port = resolvePort(portText, portOption);
  const host = normalizeHost(rawHost, bracketed);
  const literal = isIP(host) !== 0;
  return { host, literal, port, key: `${literal && host.includes(':') ? `[${host}]` : host}:${port}` };
}

function splitAuthority(authority: string): { host: string; port: string | undefined; bracketed: boolean } {
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1) throw invalid('an IPv6 address opened with [ must be closed with ]');
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw invalid(`unexpected ${quoteInput(after)} after the IPv6 address`);
    return { host: authority.slice(1, close), port: after === '' ? undefined : after.slice(1), bracketed: true };
  }
  const colons = authority.split(':').length - 1;
  if (colons === 0) return { host: authority, port: undefined, bracketed: false };
  if (colons === 1) {
    const at = authority.indexOf(':');
    return { host: authority.slice(0, at), port: authority.slice(at + 1), bracketed: false };
  }
  // Several colons: a bare IPv6 address (no port possible without brackets).
  if (isIP(authority) !== 6) throw invalid(`${quoteInput(authority)} is not a host; write an IPv6 address with a port as [2001:db8::1]:443`);
  return { host: authority, port: undefined, bracketed: true };
}

function parsePort(text: string, source: string): number {
  const port = PORT_TEXT.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) throw invalid(`${source} must be a whole number from 1 to 65535 (got ${quoteInput(text)})`);
  return port;
}

function resolvePort(inHost: string | undefined, option: number | string | undefined): number {
  const fromHost = inHost === undefined ? undefined : parsePort(inHost, 'the port in the host');
  let fromOption: number | undefined;
  if (typeof option === 'number') {
    if (!Number.isInteger(option) || option < 1 || option > 65535) throw invalid(`port must be a whole number from 1 to 65535 (got ${option})`);
    fromOption = option;
  } else if (typeof option === 'string' && option !== '') fromOption = parsePort(option.trim(), 'port');
  else if (option !== undefined && option !== '') throw invalid('port must be a number or decimal text');
  if (fromHost !== undefined && fromOption !== undefined && fromHost !== fromOption) {
    throw invalid(`the host says port ${fromHost} and the port parameter says ${fromOption}; give one`);
  }
  return fromHost ?? fromOption ?? DEFAULT_PORT;
}

function normalizeHost(raw: string, bracketed: boolean): string {
  if (raw === '') throw invalid('a host is required');
  if (bracketed) {
    // Zone ids (fe80::1%eth0) name an interface of this machine, not a host.
    const addr = isIP(raw) === 6 && !raw.includes('%') ? parseIp(raw) : null;
    if (!addr) throw invalid(`${quoteInput(raw)} is not an IPv6 address`);
    return formatIp(addr);
  }
  // An absolute form's one trailing dot is not part of the host (`93.184.215.14.` is that address, as URL parsers read it).
  const dotless = raw.endsWith('.') && !raw.endsWith('..') ? raw.slice(0, -1) : raw;
  if (isIP(dotless) === 4) {
    const addr = parseIp(dotless);
    if (!addr) throw invalid(`${quoteInput(raw)} is not an IP address in standard form`);
    return formatIp(addr);
  }
  let name = raw.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  const bad = BAD_ASCII.exec(name);
  if (bad) throw invalid(`${quoteInput(raw)} is not a hostname: ${quoteInput(bad[0])} is not allowed`);
  // Checked before IDN mapping, which would turn 0x7f.1 into 127.0.0.1.
  if (looksNumeric(name)) throw notAllowed(`${quoteInput(raw)} is a numeric form some resolvers read as an IP address; write the address in standard form`);
  const ascii = PLAIN_ASCII.test(name) && !name.includes('xn--') ? name : domainToASCII(name);
  if (ascii === '' || ascii.length > MAX_NAME_LENGTH || !HOSTNAME.test(ascii)) {
    throw invalid(`${quoteInput(raw)} is not a valid hostname: labels are letters, digits, hyphens and underscores, 1 to 63 each, 253 in all`);
  }
  if (isIP(ascii) !== 0) throw notAllowed(`${quoteInput(raw)} reads as the IP address ${ascii}; write the address itself`);
  if (ascii === 'localhost' || ascii.endsWith('.localhost')) throw notAllowed(`${ascii} is a loopback name (RFC 6761)`);
  return ascii;
}

/** A name whose last label is numeric (decimal or hex): inet_aton and friends read it as IPv4. */
function looksNumeric(name: string): boolean {
  return /^(0x[0-9a-f]*|[0-9]+)$/.test(name.slice(name.lastIndexOf('.') + 1));
}

function invalid(message: string): LookupError {
  return new LookupError('invalid_host', message);
}

function notAllowed(message: string): LookupError {
  return new LookupError('host_not_allowed', message);
}
