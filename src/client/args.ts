/**
 * The argument checks of the in-process engines that the client makes itself, for the arguments
 * a request cannot carry as they were given: JSON has no BigInt, a URL turns `['8.8.8.8']` or
 * `{ toString() {...} }` into text and cannot hold a Symbol. Each engine's `prepare` refuses
 * such an argument by its type (an IP that is not a string is `invalid_ip`, a `provider` that is
 * not a string `invalid_provider`, ...); the client throws the same LookupError (code, status,
 * message) without sending anything, where it would otherwise send something else, or throw a
 * TypeError. Everything a request carries faithfully (every string, blank or not) is sent, and
 * the service answers it as the engine does, with its request id.
 *
 * The checks of the values themselves (is it an address, a domain, a host) stay the service's:
 * they need the engines' parsers (ipaddr.js, tldts, node:url, node:net), which the client must
 * never load. Each check below names the engine code it mirrors; test/client/requests.test.ts
 * checks, for arguments of every type, that the client refuses them with the code the engine's
 * `prepare` throws, or sends what reads back as the same call.
 *
 * The engines' length rules are applied too, because the service's limits on a request line
 * (16 KiB: 431) and a body (64 KiB: 413) would answer before the engine saw a long input. What
 * an engine refuses by its length first is refused here, with its LookupError: an IP address,
 * a domain, a tls host, a password, a SHA-1. What it reads after other checks, or answers, is
 * sent cut to what the engine reads, for its answer: a User-Agent, an email address, a webhookip
 * provider list, a scamrisk field. The engines' modules load node: modules and packages, so their
 * limits are copied (LIMITS), and test/client/requests.test.ts checks each against its engine.
 *
 * Imports: only the errors and constants of modules that import nothing at run time.
 */
import { LookupError, quoteInput } from '../errors.js';
import type { BatchInput } from '../products/descriptor.js';
import { MAX_PASSWORD_BYTES } from '../products/pwbreach/types.js';
import type { BuiltProductId } from '../products/registry.js';
import { USER_AGENT_MAX_LENGTH } from '../products/useragent/types.js';

/** The arguments to send, checked (and cut where the engine reads less). Throws the engine's LookupError. */
type ArgumentCheck = (args: unknown[]) => unknown[];

/** The lengths (UTF-16 units) the engines read of an input, from the modules named. */
export const LIMITS = {
  /** src/lib/ip.ts `parseIp`'s MAX_TEXT_LENGTH: eight groups with an IPv4 tail. */
  ip: 45,
  /** src/lib/domain.ts MAX_DOMAIN_INPUT_LENGTH. */
  domain: 1024,
  /** src/products/tls/target.ts MAX_INPUT_LENGTH. */
  host: 2048,
  /** src/products/emailval/normalize.ts MAX_INPUT_LENGTH, and ECHO_LENGTH (what an invalid result echoes of a longer one). */
  email: 512,
  emailEcho: 256,
  /** src/products/scamrisk/identifiers.ts MAX_INPUT. */
  identifier: 2048,
  /** src/products/pwbreach/hash.ts `parseSha1Hex`. */
  sha1: 40,
  /** src/errors.ts `quoteInput`: what a message quotes of an input (and `...` when there is more). */
  quoted: 64,
  /** Ours: a webhookip `provider` list sent as it is given (the engine reads every name of it). */
  providers: 1024,
} as const;

/** src/lib/ip-input.ts `parseIpInput`: an address is read trimmed, and longer text is none. */
function ipArg(value: unknown): string {
  if (typeof value !== 'string') throw new LookupError('invalid_ip', 'ip is required');
  if (value.length <= LIMITS.ip) return value;
  const text = value.trim();
  if (text === '') throw new LookupError('invalid_ip', 'ip is required');
  if (text.length > LIMITS.ip) throw new LookupError('invalid_ip', `${quoteInput(value)} is not a valid IPv4 or IPv6 address`);
  return lessPadding(value, text);
}

/** src/lib/domain.ts `parseDomainName` (emailauth, whois, domainrep): a domain is read trimmed, up to a length. */
function domainArg(value: unknown): string {
  const invalid = (message: string) => new LookupError('invalid_domain', message);
  if (typeof value !== 'string') throw invalid('a domain name is required');
  if (value.length <= LIMITS.domain) return value;
  const text = value.trim();
  if (text === '') throw invalid('a domain name is required');
  if (text.length > LIMITS.domain) throw invalid(`domain is longer than ${LIMITS.domain} characters`);
  return lessPadding(value, text);
}

/**
 * `value` with most of the white space around `text` (its trimmed form) taken off, for the same
 * answer: the engine reads `text`, and its messages quote `value` by its first 64 characters and
 * whether there are more (quoteInput), which are kept.
 */
function lessPadding(value: string, text: string): string {
  const start = value.length - value.trimStart().length;
  if (start > LIMITS.quoted) return value.slice(0, LIMITS.quoted + 1) + text;
  return value.slice(0, Math.max(LIMITS.quoted + 1, start + text.length));
}

/** A property of an options argument as the engines read it (`options?.provider`): undefined on null and undefined. */
function option(options: unknown, name: string): unknown {
  return options === undefined || options === null ? undefined : (options as Record<string, unknown>)[name];
}

/** src/products/useragent/engine.ts `validate`: a string. */
function userAgentArg(value: unknown): string {
  if (typeof value !== 'string') throw new LookupError('invalid_user_agent', 'user agent must be a non-empty string');
  return userAgentToSend(value);
}

/**
 * A User-Agent as short as it can be sent for the same answer. The engine checks that the whole
 * is not blank, then reads its first USER_AGENT_MAX_LENGTH characters (`truncate`: one fewer when
 * the last is the first half of a surrogate pair). Its first USER_AGENT_MAX_LENGTH + 1 are sent,
 * so that the service cuts them by that rule itself, to the same characters. When they are blank
 * and the rest is not, one character of the rest goes after them, so that the service's check
 * passes as the engine's did; its cut drops it.
 */
function userAgentToSend(ua: string): string {
  if (ua.length <= USER_AGENT_MAX_LENGTH + 1) return ua;
  const head = ua.slice(0, USER_AGENT_MAX_LENGTH + 1);
  if (/\S/.test(head)) return head;
  const tail = ua.slice(USER_AGENT_MAX_LENGTH + 1).trimStart();
  return tail === '' ? head : `${head}${tail[0]}`;
}

const ip: ArgumentCheck = ([value, ...rest]) => [ipArg(value), ...rest];
const domain: ArgumentCheck = ([value, ...rest]) => [domainArg(value), ...rest];

/** src/products/webhookip/engine.ts `prepare`: the address, then the provider option (`createProviderFilters`). */
function webhookipArgs([address, options, ...rest]: unknown[]): unknown[] {
  const sent = ipArg(address);
  const provider = option(options, 'provider');
  if (provider === undefined) return [sent, options, ...rest];
  if (typeof provider !== 'string') throw new LookupError('invalid_provider', 'provider must be a string');
  const providers = providersToSend(provider);
  return [sent, providers === provider ? options : { ...(options as object), provider: providers }, ...rest];
}

/**
 * A long `provider` list as short as it can be sent for the same answer. The engine reads its
 * names trimmed and lower-cased, skips blanks, and refuses the first it does not know, quoted:
 * each name is sent once, up to the first longer than the quote, which no provider's id or alias
 * is (test/client/requests.test.ts checks), cut where its quote stays the same.
 */
function providersToSend(list: string): string {
  if (list.length <= LIMITS.providers) return list;
  const names = new Set<string>();
  for (const part of list.split(',')) {
    const name = part.trim();
    if (name.length > LIMITS.quoted) {
      names.add(cutQuoted(name));
      break;
    }
    if (name !== '') names.add(name);
  }
  return [...names].join(',');
}

/**
 * A trimmed name longer than the quote, cut for the same quote: lower-cased as the engine does,
 * the cut starts with the same 64 characters and has more. It ends after the first character
 * past them that is neither white space (the engine trims) nor case-ignorable, else the first
 * that is not white space: a final sigma among the 64 becomes ς or σ by what follows it up to
 * such a character (or the end).
 */
function cutQuoted(name: string): string {
  const rest = name.slice(LIMITS.quoted);
  let at = rest.search(/[^\s\p{Case_Ignorable}]/u);
  if (at === -1) at = rest.search(/\S/u);
  const end = LIMITS.quoted + at;
  return name.slice(0, end + ((name.codePointAt(end) ?? 0) > 0xffff ? 2 : 1));
}

/** src/products/emailval/engine.ts `prepare`. */
function emailvalArgs([email, ...rest]: unknown[]): unknown[] {
  if (typeof email !== 'string') throw new LookupError('invalid_email', 'email is required');
  return [emailToSend(email), ...rest];
}

/** C0 controls, DEL and C1 controls, as src/products/emailval/normalize.ts reads them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this regex is for
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;

/**
 * A long email address as short as it can be sent for the same answer. src/products/emailval/
 * normalize.ts `normalizeEmail` replaces control characters, trims, and answers text longer than
 * LIMITS.email unread: invalid (`control_characters` or `address_too_long`), echoing its first
 * LIMITS.emailEcho characters. Sent: the input without the white space around that text, and
 * when that is still too long, its first LIMITS.email characters and one more that keeps both
 * the length and the presence of a control character.
 */
function emailToSend(email: string): string {
  if (email.length <= LIMITS.email) return email;
  const controls = email.search(CONTROLS) !== -1;
  const replaced = controls ? email.replace(CONTROLS, '\uFFFD') : email;
  const start = replaced.length - replaced.trimStart().length;
  const end = Math.max(start, replaced.trimEnd().length);
  // All white space: one of its characters (an empty value is "email is required" instead).
  if (start === end) return email[0];
  const text = email.slice(start, end);
  return text.length <= LIMITS.email ? text : `${text.slice(0, LIMITS.email)}${controls ? '\x7f' : 'x'}`;
}

/** src/products/tls/target.ts `parseTarget` and `resolvePort`: a port number goes as its text, which the service reads alike. */
function tlsArgs(args: unknown[]): unknown[] {
  const [host] = args;
  if (typeof host !== 'string') throw new LookupError('invalid_host', 'a host is required');
  if (host.length > LIMITS.host)
    throw new LookupError('invalid_host', host.trim() === '' ? 'a host is required' : `host is longer than ${LIMITS.host} characters`);
  const port = option(args[1], 'port');
  if (port !== undefined && typeof port !== 'number' && typeof port !== 'string')
    throw new LookupError('invalid_host', 'port must be a number or decimal text');
  return args;
}

/** Empty, null and undefined count as not given (src/products/pwbreach/engine.ts `given`). */
const given = (value: unknown) => value !== undefined && value !== null && value !== '';

/**
 * src/products/pwbreach/engine.ts `prepare`, in its order, all but the hashing: what a body
 * carries as it is given is sent (a sha1's digits are the service's to check); a password or
 * sha1 of another type, or a password longer than the engine takes, is refused with its error.
 */
function pwbreachArgs(args: unknown[]): unknown[] {
  const [input] = args;
  let password: unknown;
  let sha1: unknown;
  if (typeof input === 'string') password = input;
  else if (typeof input === 'object' && input !== null) ({ password, sha1 } = input as { password?: unknown; sha1?: unknown });
  const invalid = (message: string) => new LookupError('invalid_password', message);
  const carried = (value: unknown) => !given(value) || typeof value === 'string';
  if (given(sha1)) {
    if (given(password) && !(carried(password) && carried(sha1))) throw invalid('send either password or sha1, not both');
    if (typeof sha1 !== 'string') throw invalid('sha1 must be 40 hexadecimal characters');
    // Refused by its length alone, which a body may not hold.
    if (sha1.length > LIMITS.sha1) throw invalid(given(password) ? 'send either password or sha1, not both' : 'sha1 must be 40 hexadecimal characters');
    return args;
  }
  if (!given(password)) return args;
  if (typeof password !== 'string') throw invalid('password must be a string');
  if (password.length > MAX_PASSWORD_BYTES || new TextEncoder().encode(password).length > MAX_PASSWORD_BYTES) {
    throw invalid(`password longer than ${MAX_PASSWORD_BYTES} bytes (UTF-8)`);
  }
  return args;
}

/**
 * src/products/scamrisk/engine.ts `prepare`: an object whose fields (type, value, region, or one
 * type name) are strings; a field of another type is refused there whichever it is. Sent as a
 * plain object of those fields, as the engine reads them (its own enumerable ones), each cut to
 * one character more than an identifier may have: the engine refuses a longer identifier by its
 * length alone (`longer than 2048 characters`), after checks of the request's shape that stay
 * the service's, and reads no more of the other fields (the first 32 characters of a type).
 */
function scamriskArgs([request, ...rest]: unknown[]): unknown[] {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new LookupError('invalid_request', 'send { "type": ..., "value": ... } or { "<type>": value }');
  }
  const fields: [string, string][] = [];
  for (const name of Object.keys(request)) {
    const value: unknown = (request as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new LookupError('invalid_request', `${quoteInput(name)} must be a string, not ${typeName(value)}`);
    fields.push([name, value.slice(0, LIMITS.identifier + 1)]);
  }
  return [Object.fromEntries(fields), ...rest];
}

/**
 * Each built product's checks, by id (dnsbl's choice of zones is refused after its address, by
 * the descriptor's `refuse`, as the engine reads them after it). A product missing here (one
 * added since) is sent as it is called, and the requests test names it: add its engine's checks.
 */
export const ARGUMENT_CHECKS: { readonly [Id in BuiltProductId]?: ArgumentCheck } = {
  useragent: ([ua, ...rest]) => [userAgentArg(ua), ...rest],
  webhookip: webhookipArgs,
  geoip: ip,
  timezone: ip,
  emailauth: domain,
  dnsbl: ip,
  emailval: emailvalArgs,
  tls: tlsArgs,
  whois: domain,
  asn: ip,
  pwbreach: pwbreachArgs,
  scamrisk: scamriskArgs,
  domainrep: domain,
  riskscore: ip,
};

/**
 * `client.batch.<id>(inputs)`'s inputs: an array of strings, as the service's batch route takes
 * them (src/api/batch.ts `batchInputs`: `invalid_request` otherwise); User-Agents cut as a
 * single call cuts them. Their count and each value are the service's to judge.
 */
export function batchInputs(inputs: unknown, input: BatchInput): string[] {
  const shape = `send an array of ${input} strings`;
  if (!Array.isArray(inputs)) throw new LookupError('invalid_request', `no inputs array; ${shape}`);
  const bad = inputs.findIndex((value) => typeof value !== 'string');
  if (bad !== -1) throw new LookupError('invalid_request', `inputs[${bad}] is not a string; ${shape}`);
  return input === 'ua' ? inputs.map(userAgentToSend) : (inputs as string[]);
}

/** `a number`, `an array`, `null`, ...: for messages. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value === 'bigint' ? 'BigInt' : typeof value}`;
}
