/**
 * Shared command-line parsing: `node:util` parseArgs in strict mode plus validators that turn
 * flag text into checked values. Every problem becomes a UsageError (exit code 2) whose
 * message names the flag and the bad value.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDnsServer } from '../lib/dns/servers.js';
import { formatCidr, hostBitsProblem, parseCidr, type Cidr } from '../lib/ip.js';
import { isProductId, PRODUCT_IDS, PRODUCTS, type ProductId } from '../products/catalog.js';
import { UsageError } from './errors.js';
import { isClusterUrl, redisUrlProblem } from '../metering/redis/url.js';
import { redactUserinfo } from '../lib/redact-url.js';
import { cliEnv, cliPath } from './io.js';

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/** What parseArgs returns for a command's options plus `--help`, in strict mode with positionals. */
type ParsedCommand<T extends OptionSpecs> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T & typeof HELP_OPTION; allowPositionals: true; strict: true }>
>;

/** `--db FILE`: the SQLite file of keys, plans and usage (and scamrisk's reports). */
export const DB_OPTION = { db: { type: 'string' } } as const;
/** `--db FILE` or `--redis URL`: taken by every command that reads or writes keys and plans. */
export const METER_OPTIONS = { ...DB_OPTION, redis: { type: 'string' } } as const;
/** `--data-dir DIR`: taken by every command that loads datasets. */
export const DATA_DIR_OPTION = { 'data-dir': { type: 'string' } } as const;
/** `--dns HOST:PORT`: the DNS servers of the DNS-using products (repeatable or comma-separated). */
export const DNS_OPTION = { dns: { type: 'string', multiple: true } } as const;

export const DEFAULT_DB_PATH = './seclookup.db';

/**
 * Parse one command's flags (plus `-h/--help`). `command` is the full command name
 * (`keys create`) used in messages and in the hint to run `--help`.
 */
export function parseCommand<T extends OptionSpecs>(argv: string[], options: T, command: string): ParsedCommand<T> {
  let parsed: ParsedCommand<T>;
  let tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>;
  try {
    ({ tokens, ...parsed } = parseArgs({ args: argv, options: { ...options, ...HELP_OPTION }, allowPositionals: true, strict: true, tokens: true }));
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(tidyParseArgsMessage(error.message), command);
    throw error;
  }
  refuseRepeatedValues(tokens, options, command);
  for (const [name, value] of Object.entries(parsed.values)) {
    if (typeof value === 'string' ? isBlank(value) : Array.isArray(value) && value.some((item) => typeof item === 'string' && isBlank(item)))
      throw new UsageError(emptyValueMessage(`--${name}`), command);
  }
  return parsed;
}

/**
 * A flag that takes one value, given twice (`--db a.db --db b.db`, `--product geoip --product
 * asn`), is refused rather than the last one silently taken: either could be the one meant.
 * Flags declared `multiple` (documented as repeatable) and switches are left alone. The values
 * are not repeated in the message (a --redis URL may carry a password).
 */
function refuseRepeatedValues(tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>, options: OptionSpecs, command: string): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const spec = options[token.name];
    if (!spec || spec.type !== 'string' || spec.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`option --${token.name} was given more than once; give it once`, command);
    seen.add(token.name);
  }
}

/** Empty, or only spaces: no value at all. */
export function isBlank(value: string): boolean {
  return value.trim() === '';
}

/**
 * An empty value is refused rather than taken as "not given": `--db ''` (a variable that was not
 * set, in a script) must not fall back to ./seclookup.db, nor `--ip-allow ''` to "any address",
 * nor `--host ''` to every interface.
 */
export function emptyValueMessage(name: string): string {
  return `${name} needs a value (got an empty one)`;
}

function isParseArgsError(error: unknown): error is Error & { code: string } {
  const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/** parseArgs messages are clear but long; keep the first sentence and shorten the common one. */
function tidyParseArgsMessage(message: string): string {
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message);
  if (missing) return `option ${missing[1]} needs a value`;
  const ambiguous = /^Option '(?:-\w, )?(--[\w-]+)' argument is ambiguous/.exec(message);
  if (ambiguous) return `option ${ambiguous[1]} needs a value (for a value that starts with '-', write ${ambiguous[1]}=-value)`;
  const firstSentence = message.split(/\.\s+(?=[A-Z])/)[0];
  return firstSentence.charAt(0).toLowerCase() + firstSentence.slice(1);
}

/**
 * Check the positional arguments against the names the command expects (`['PRODUCT', 'INPUT']`)
 * and return them in order.
 */
export function expectPositionals(positionals: string[], names: readonly string[], command: string): string[] {
  if (positionals.length < names.length) throw new UsageError(`missing ${names.slice(positionals.length).join(' and ')}`, command);
  if (positionals.length > names.length) {
    const extra = positionals[names.length];
    // A secret key pasted twice (`keys revoke ua_sec_... ua_sec_...`) is not repeated on the terminal.
    const shown = mentionsSecretKey(extra) ? '(a secret key)' : JSON.stringify(extra);
    throw new UsageError(`unexpected argument ${shown} (quote values that contain spaces)`, command);
  }
  return positionals;
}

/** Does `text` hold a secret key of any product (`ua_sec_...`, `tf_sec_...`)? Messages never repeat one. */
export function mentionsSecretKey(text: string): boolean {
  return Object.values(PRODUCTS).some((product) => text.includes(product.secretPrefix));
}

export function parseProduct(value: string, command: string): ProductId {
  if (isProductId(value)) return value;
  throw new UsageError(
    `unknown product ${mentionsSecretKey(value) ? '(a secret key)' : JSON.stringify(value)}; products are: ${PRODUCT_IDS.join(', ')}`,
    command,
  );
}

/** A whole number in [min, max], written in plain decimal digits. */
export function parseInteger(value: string, flag: string, command: string, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `a whole number >= ${min}` : `a whole number from ${min} to ${max}`;
    throw new UsageError(`${flag} must be ${range} (got ${JSON.stringify(value)})`, command);
  }
  return number;
}

/** `N` or `unlimited` (returned as null, as the meter stores it). */
export function parseQuota(value: string, flag: string, command: string): number | null {
  if (value.trim().toLowerCase() === 'unlimited') return null;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${flag} must be a whole number >= 0 or "unlimited" (got ${JSON.stringify(value)})`, command);
  return parseInteger(value, flag, command, { min: 0 });
}

/**
 * A comma-separated CIDR list (`10.0.0.0/8,2001:db8::/32`); the flag may also be repeated.
 * A bare address counts as a /32 or /128; a CIDR with host bits set (`10.0.0.1/8`) is refused,
 * naming the network and the single address it may have meant. Returns the CIDRs in
 * normalised form.
 */
export function parseCidrList(values: string | string[] | undefined, flag: string, command: string): string[] {
  const given = Array.isArray(values) ? values : values === undefined ? [] : [values];
  const items = given
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  // `--ip-allow ,` names no network: it must not mean "any address". An empty list (`[]` in a config file) is "none".
  if (given.length > 0 && items.length === 0)
    throw new UsageError(`${flag} needs at least one network or address (got ${JSON.stringify(given.join(','))})`, command);
  return items.map((item) => {
    let cidr: Cidr;
    try {
      cidr = parseCidr(item);
    } catch {
      throw new UsageError(`${flag}: ${JSON.stringify(item)} is not an IP address or CIDR (e.g. 203.0.113.0/24 or 2001:db8::/32)`, command);
    }
    const problem = hostBitsProblem(cidr);
    if (problem) throw new UsageError(`${flag}: ${JSON.stringify(item)} ${problem}`, command);
    return formatCidr(cidr);
  });
}

/** The environment variable a flag falls back to: `--geoip-db` reads `$SECLOOKUP_GEOIP_DB`. */
export function envName(flag: string): string {
  return `SECLOOKUP_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * `--db`, else `$SECLOOKUP_DB`, else `./seclookup.db`. An empty `--db` is refused (parseCommand
 * says so first); an empty variable counts as unset, as shells and service managers mean it.
 */
export function resolveDbPath(flag: string | undefined): string {
  if (flag !== undefined && isBlank(flag)) throw new UsageError(emptyValueMessage('--db'));
  return cliPath(flag ?? (cliEnv().SECLOOKUP_DB || DEFAULT_DB_PATH));
}

/**
 * `--redis`, else `$SECLOOKUP_REDIS`, else undefined (the SQLite file). Only `redis://`,
 * `rediss://` URLs and `redis+cluster://` (`rediss+cluster://`) seed node lists: a typo must not
 * fall back to a local file that other instances cannot see. `null` is "not Redis, whatever the
 * environment says": an admin command given `--db FILE` (see chooseAdminStore).
 */
export function resolveRedisUrl(flag: string | null | undefined): string | undefined {
  if (flag === null) return undefined;
  if (flag !== undefined && isBlank(flag)) throw new UsageError(emptyValueMessage('--redis'));
  const url = flag ?? (cliEnv().SECLOOKUP_REDIS || undefined);
  if (url === undefined) return undefined;
  // Named as the operator gave it; the URL may carry a password, so it is never quoted whole.
  const name = flag === undefined ? '$SECLOOKUP_REDIS' : '--redis';
  if (!isClusterUrl(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(
        `${name} must be a URL such as redis://127.0.0.1:6379/0 or redis+cluster://10.0.0.1:7000,10.0.0.2:7000 (got ${JSON.stringify(redactUserinfo(url))})`,
      );
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
      throw new UsageError(
        `${name} must be a redis:// or rediss:// URL, or redis+cluster://h1:p1,h2:p2 for a Redis Cluster (got ${JSON.stringify(parsed.protocol)})`,
      );
  }
  const problem = redisUrlProblem(url);
  if (problem) throw new UsageError(`${name}: ${problem}`);
  return url;
}

/** `--data-dir`, else `$SECLOOKUP_DATA_DIR`, else undefined (the datasets bundled with the package). An empty `--data-dir` is refused. */
export function resolveDataDir(flag: string | undefined): string | undefined {
  if (flag !== undefined && isBlank(flag)) throw new UsageError(emptyValueMessage('--data-dir'));
  const dir = flag ?? (cliEnv().SECLOOKUP_DATA_DIR || undefined);
  return dir === undefined ? undefined : cliPath(dir);
}

/**
 * `--dns 127.0.0.1:5353` (repeatable, or comma-separated): DNS servers as `IP`, `IP:port` or
 * `[IPv6]:port`. Undefined when not given (the system's resolvers are used).
 */
export function parseDnsServers(values: string[] | undefined, command: string): string[] | undefined {
  if (values === undefined) return undefined;
  const items = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  // `--dns ,` names no server: refused, as `--trust-proxy ,` is, rather than read as "the system's".
  if (items.length === 0) throw new UsageError('--dns names no DNS server (give IP, IP:port or [IPv6]:port, comma-separated)', command);
  return items.map((item) => {
    try {
      return parseDnsServer(item).text;
    } catch {
      throw new UsageError(`--dns: ${JSON.stringify(item)} is not a DNS server address (IP, IP:port or [IPv6]:port, e.g. 127.0.0.1:5353)`, command);
    }
  });
}
