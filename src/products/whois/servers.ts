/**
 * Which server answers for a TLD: RDAP base URLs from IANA's bootstrap (data/whois/
 * rdap-bootstrap.json) and the registry-published overrides (rdap-overrides.json), port-43
 * servers from servers.json, each overridable by engine options; and how each WHOIS server
 * wants its query written.
 */
import { join } from 'node:path';
import { invalidOption, SeclookupError } from '../../errors.js';
import { type DatasetDate, readJsonDataset, recordedDate } from '../../lib/datasets.js';
import { describeValue } from '../../lib/option-checks.js';
import type { RdapBootstrap } from './types.js';
import { redactUserinfo } from '../../lib/redact-url.js';

export const BOOTSTRAP_FILE = 'rdap-bootstrap.json';
export const OVERRIDES_FILE = 'rdap-overrides.json';
export const SERVERS_FILE = 'servers.json';
export const IANA_WHOIS_SERVER = 'whois.iana.org';
export const WHOIS_PORT = 43;

export function whoisDataPath(dataDir: string, file: string): string {
  return join(dataDir, 'whois', file);
}

/** A WHOIS server: a host name or IP literal, and its port. */
export interface ServerAddress {
  host: string;
  port: number;
}

/** Per-TLD server tables, merged from the bundled files and the engine's options. */
export interface ServerTables {
  /** RDAP base URLs (ending in `/`) by TLD (or longer suffix); null: no RDAP. */
  rdap: ReadonlyMap<string, readonly string[] | null>;
  /** WHOIS servers by TLD (or longer suffix); null: none known. */
  whois: ReadonlyMap<string, ServerAddress | null>;
  /**
   * Private-section suffixes a registry operates (`br.com`, CentralNic): names under them are
   * registered there and looked up at their WHOIS server (in `whois`), never over RDAP.
   */
  privateSuffixes: ReadonlySet<string>;
  /** When the bootstrap was published (IANA's `publication`), if it says. */
  publication: string | null;
  /** The dates the data files read record: the bootstrap's `publication`, the two tables' `updated`. */
  dates: DatasetDate[];
}

/** Longest-suffix match (RFC 9224 section 4): `example.co.uk` tries `co.uk`, then `uk`. */
export function bySuffix<T>(table: ReadonlyMap<string, T>, domain: string): { suffix: string; value: T } | undefined {
  const labels = domain.split('.');
  for (let i = 1; i < labels.length; i++) {
    const suffix = labels.slice(i).join('.');
    if (table.has(suffix)) return { suffix, value: table.get(suffix) as T };
  }
  return undefined;
}

/**
 * Check an RDAP bootstrap document's shape (RFC 9224: `services` of `[[tld, ...], [url, ...]]`,
 * http(s) URLs). Throws a message naming the first problem.
 */
export function bootstrapProblem(document: unknown): string | null {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return 'not a JSON object';
  const services = (document as RdapBootstrap).services;
  if (!Array.isArray(services) || services.length === 0) return 'no "services" array';
  for (const [i, service] of services.entries()) {
    if (!Array.isArray(service) || service.length < 2 || !Array.isArray(service[0]) || !Array.isArray(service[1]))
      return `services[${i}] is not [[tlds], [urls]]`;
    if (!service[0].every((tld) => typeof tld === 'string' && /^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(tld)))
      return `services[${i}] lists a TLD that is not a DNS label`;
    if (!service[1].every((url) => typeof url === 'string' && isHttpUrl(url))) return `services[${i}] lists a URL that is not http(s)`;
  }
  return null;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A base URL as RFC 9224 wants it: ending in `/` (so `domain/<name>` appends). */
function baseUrl(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** HTTPS first (RFC 9224 section 3: clients should prefer it), then the rest in the file's order. */
function preferHttps(urls: readonly string[]): string[] {
  return [...urls.filter((u) => u.startsWith('https:')), ...urls.filter((u) => !u.startsWith('https:'))].map(baseUrl);
}

export function loadBootstrap(dataDir: string): RdapBootstrap {
  const path = whoisDataPath(dataDir, BOOTSTRAP_FILE);
  const document = readJsonDataset<RdapBootstrap>(path);
  const problem = bootstrapProblem(document);
  if (problem) throw new SeclookupError('dataset_invalid', `seclookup: dataset ${path} is not an RDAP bootstrap file: ${problem}`);
  return document;
}

function loadMap(dataDir: string, file: string, field: string, optional = false, dates?: DatasetDate[]): Record<string, string> {
  const path = whoisDataPath(dataDir, file);
  const document = readJsonDataset<Record<string, unknown>>(path);
  dates?.push({ dataset: file, date: recordedDate(document, 'updated') });
  const map = document?.[field];
  if (optional && map === undefined) return {};
  if (typeof map !== 'object' || map === null || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string')) {
    throw new SeclookupError('dataset_invalid', `seclookup: dataset ${path} has no "${field}" object of strings`);
  }
  return map as Record<string, string>;
}

export interface TableOptions {
  rdapBootstrap?: RdapBootstrap;
  rdapServers?: Readonly<Record<string, string | null>>;
  whoisServers?: Readonly<Record<string, string | null>>;
}

/**
 * The tables for an engine: bootstrap < rdap-overrides.json < `rdapServers` option, and
 * servers.json < `whoisServers` option. Bundled files are read now (dataset_missing /
 * dataset_invalid naming the file); a bad option is a TypeError `invalid_option`.
 */
export function buildServerTables(dataDir: string, options: TableOptions = {}): ServerTables {
  checkTableOptions(options);
  const bootstrap = options.rdapBootstrap ?? loadBootstrap(dataDir);
  const publication = typeof bootstrap.publication === 'string' ? bootstrap.publication : null;
  const dates: DatasetDate[] = [{ dataset: BOOTSTRAP_FILE, date: publication }];
  const rdap = new Map<string, readonly string[] | null>();
  for (const [tlds, urls] of bootstrap.services) for (const tld of tlds) rdap.set(tld.toLowerCase(), preferHttps(urls));
  for (const [tld, url] of Object.entries(loadMap(dataDir, OVERRIDES_FILE, 'services', false, dates))) {
    if (!isHttpUrl(url))
      throw new SeclookupError('dataset_invalid', `seclookup: dataset ${whoisDataPath(dataDir, OVERRIDES_FILE)}: ${tld} is not an http(s) URL`);
    rdap.set(tld.toLowerCase(), [baseUrl(url)]);
  }
  for (const [tld, url] of Object.entries(options.rdapServers ?? {})) {
    if (url !== null && (typeof url !== 'string' || !isHttpUrl(url)))
      throw invalidOption(
        `whois rdapServers.${tld} must be an http(s) URL or null (got ${JSON.stringify(typeof url === 'string' ? redactUserinfo(url) : url)})`,
      );
    rdap.set(checkSuffix(tld, 'rdapServers'), url === null ? null : [baseUrl(url)]);
  }

  const whois = new Map<string, ServerAddress | null>();
  const privateSuffixes = new Set<string>();
  const servers = loadMap(dataDir, SERVERS_FILE, 'servers', false, dates);
  const privates = loadMap(dataDir, SERVERS_FILE, 'privateSuffixes', true);
  for (const [tld, server] of [...Object.entries(servers), ...Object.entries(privates)]) {
    let address: ServerAddress;
    try {
      address = parseServerAddress(server);
    } catch (error) {
      throw new SeclookupError('dataset_invalid', `seclookup: dataset ${whoisDataPath(dataDir, SERVERS_FILE)}: ${tld}: ${(error as Error).message}`);
    }
    whois.set(tld.toLowerCase(), address);
  }
  for (const suffix of Object.keys(privates)) privateSuffixes.add(suffix.toLowerCase());
  for (const [tld, server] of Object.entries(options.whoisServers ?? {})) {
    whois.set(checkSuffix(tld, 'whoisServers'), server === null ? null : parseServerAddress(server, `whois whoisServers.${tld}`));
  }
  return { rdap, whois, privateSuffixes, publication, dates };
}

/** The table options, checked without reading the bundled files (createLookup checks them at construction). */
export function checkTableOptions(options: { readonly rdapBootstrap?: unknown; readonly rdapServers?: unknown; readonly whoisServers?: unknown }): void {
  if (options.rdapBootstrap !== undefined) {
    const problem = bootstrapProblem(options.rdapBootstrap);
    if (problem) throw invalidOption(`whois rdapBootstrap: ${problem}`);
  }
  for (const name of ['rdapServers', 'whoisServers'] as const) {
    const map = options[name];
    if (map !== undefined && (typeof map !== 'object' || map === null || Array.isArray(map)))
      throw invalidOption(`whois ${name} must be an object: TLD -> ${name === 'rdapServers' ? 'URL' : 'host[:port]'} or null (got ${describeValue(map)})`);
  }
  for (const [tld, url] of Object.entries((options.rdapServers ?? {}) as Record<string, unknown>)) {
    if (url !== null && (typeof url !== 'string' || !isHttpUrl(url)))
      throw invalidOption(
        `whois rdapServers.${tld} must be an http(s) URL or null (got ${JSON.stringify(typeof url === 'string' ? redactUserinfo(url) : url)})`,
      );
    checkSuffix(tld, 'rdapServers');
  }
  for (const [tld, server] of Object.entries((options.whoisServers ?? {}) as Record<string, unknown>)) {
    checkSuffix(tld, 'whoisServers');
    if (server !== null) parseServerAddress(server as string, `whois whoisServers.${tld}`);
  }
}

function checkSuffix(tld: string, option: string): string {
  const suffix = tld.toLowerCase().replace(/^\./, '');
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(suffix)) throw invalidOption(`whois ${option}: ${JSON.stringify(tld)} is not a TLD`);
  return suffix;
}

/**
 * The name a registry holds for `name` when it lies under a private suffix that registry
 * operates: `www.example.br.com` -> `example.br.com` (the longest such suffix, one label more);
 * null when it lies under none (or is the suffix itself).
 */
export function privateRegistrable(name: string, suffixes: ReadonlySet<string>): string | null {
  if (suffixes.size === 0) return null;
  const labels = name.split('.');
  for (let i = 1; i < labels.length; i++) {
    if (suffixes.has(labels.slice(i).join('.'))) return labels.slice(i - 1).join('.');
  }
  return null;
}

/** The number of TLDs (or suffixes) with an RDAP or a WHOIS server: status `database_records`. */
export function knownTldCount(tables: ServerTables): number {
  const known = new Set<string>();
  for (const [tld, urls] of tables.rdap) if (urls) known.add(tld);
  for (const [tld, server] of tables.whois) if (server) known.add(tld);
  return known.size;
}

/**
 * `host`, `host:port`, `[v6]:port` or a bare IPv6 literal. Port 43 unless given. Throws a
 * TypeError `invalid_option` naming `label`.
 */
export function parseServerAddress(text: string, label = 'WHOIS server'): ServerAddress {
  if (typeof text !== 'string') throw invalidOption(`${label} must be a string`);
  const value = text.trim();
  let host = value;
  let port = WHOIS_PORT;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1];
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if ((value.match(/:/g) ?? []).length === 1) {
    const [name, portText] = value.split(':');
    host = name;
    port = /^\d+$/.test(portText) ? Number(portText) : NaN;
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalidOption(`${label}: bad port in ${JSON.stringify(text)}`);
  if (!/^[a-z0-9.:-]+$/i.test(host) || host === '') throw invalidOption(`${label}: ${JSON.stringify(text)} is not host or host:port`);
  return { host: host.toLowerCase(), port };
}

/** `host:port` as a message names it. */
export function formatAddress({ host, port }: ServerAddress): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return port === WHOIS_PORT ? shown : `${shown}:${port}`;
}

/**
 * Servers that want the query written their own way (by host):
 * - whois.denic.de: `-T dn,ace <name>`, the domain object with the name in ASCII (the
 *   plain query gives a notice only);
 * - whois.jprs.jp: `<name>/e`, English labels instead of Japanese;
 * - Verisign's registries: `domain <name>`, domain records only (a plain query also lists
 *   every host and name that merely starts with it).
 */
const QUERY_FORMATS: Readonly<Record<string, (name: string) => string>> = {
  'whois.denic.de': (name) => `-T dn,ace ${name}`,
  'whois.jprs.jp': (name) => `${name}/e`,
  'whois.verisign-grs.com': (name) => `domain ${name}`,
  'ccwhois.verisign-grs.com': (name) => `domain ${name}`,
  'tvwhois.verisign-grs.com': (name) => `domain ${name}`,
};

export function whoisQueryFor(server: ServerAddress, name: string): string {
  return (QUERY_FORMATS[server.host] ?? ((n: string) => n))(name);
}
