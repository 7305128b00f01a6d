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
 * Two length rules are applied too, because the service's body limit (64 KiB by default) would
 * answer 413 before the engine saw the input: a User-Agent is sent cut to the characters the
 * engine reads, and a password longer than the engine takes is refused as the engine refuses it.
 *
 * Imports: only the errors and constants of modules that import nothing at run time.
 */
import { LookupError, quoteInput } from '../errors.js';
import type { BatchInput } from '../products/descriptor.js';
import { MAX_PASSWORD_BYTES } from '../products/pwbreach/types.js';
import type { BuiltProductId } from '../products/registry.js';
import { USER_AGENT_MAX_LENGTH } from '../products/useragent/types.js';

/** The arguments to send, checked (and normalized where the engine would: the User-Agent is cut). Throws the engine's LookupError. */
type ArgumentCheck = (args: unknown[]) => unknown[];

/** src/lib/ip-input.ts `parseIpInput`. */
function checkIp(value: unknown): void {
  if (typeof value !== 'string') throw new LookupError('invalid_ip', 'ip is required');
}

/** src/lib/domain.ts `parseDomainName` (emailauth, whois, domainrep). */
function checkDomain(value: unknown): void {
  if (typeof value !== 'string') throw new LookupError('invalid_domain', 'a domain name is required');
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

const ip: ArgumentCheck = (args) => (checkIp(args[0]), args);
const domain: ArgumentCheck = (args) => (checkDomain(args[0]), args);

/** src/products/webhookip/engine.ts `prepare`: the address, then the provider option (`createProviderFilters`). */
function webhookipArgs(args: unknown[]): unknown[] {
  checkIp(args[0]);
  const provider = option(args[1], 'provider');
  if (provider !== undefined && typeof provider !== 'string') throw new LookupError('invalid_provider', 'provider must be a string');
  return args;
}

/** src/products/emailval/engine.ts `prepare`. */
function emailvalArgs(args: unknown[]): unknown[] {
  if (typeof args[0] !== 'string') throw new LookupError('invalid_email', 'email is required');
  return args;
}

/** src/products/tls/target.ts `parseTarget` and `resolvePort`: a port number goes as its text, which the service reads alike. */
function tlsArgs(args: unknown[]): unknown[] {
  if (typeof args[0] !== 'string') throw new LookupError('invalid_host', 'a host is required');
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
 * plain object of those fields, as the engine reads them (its own enumerable ones).
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
    fields.push([name, value]);
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
