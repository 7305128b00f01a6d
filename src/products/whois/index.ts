import { invalidOption } from '../../errors.js';
import { datasetAgesOf } from '../../lib/datasets.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import { getLookupRoutes } from '../route.js';
import { createWhoisEngine, resolveWhoisOptions, type CachedWhois } from './engine.js';
import { BOOTSTRAP_FILE, buildServerTables, checkTableOptions, parseServerAddress } from './servers.js';
import type { WhoisEngineOptions } from './types.js';
import { BootstrapUpdateError, updateRdapBootstrap } from './update.js';
import { WHOIS_DOC } from './doc.js';
import type { WhoisEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    whois: WhoisEngine;
  }
}

/** whois: registration data for a domain, RDAP first, port-43 WHOIS for TLDs without RDAP. */
export default defineProduct({
  id: 'whois',
  optionNames: {
    rdapBootstrap: true,
    rdapServers: true,
    whoisServers: true,
    ianaServer: true,
    whoisPort: true,
    timeouts: true,
    lookupTimeoutMs: true,
    maxBytes: true,
    maxRedirects: true,
    cacheSize: true,
    ttlMs: true,
    shortTtlMs: true,
  },
  checkOptions: (options) => {
    resolveWhoisOptions(options);
    checkTableOptions(options);
  },
  createEngine: ({ dataDir, options, cache, outbound, now }: EngineContext<WhoisEngineOptions>) => {
    const { cacheSize, ttlMs } = resolveWhoisOptions(options);
    return createWhoisEngine(
      { tables: buildServerTables(dataDir, options), guard: outbound, cache: cache<CachedWhois>({ maxEntries: cacheSize, ttlMs }), now },
      options,
    );
  },
  // SPEC: GET ?domain= and GET /lookup/{domain}.
  routes: getLookupRoutes('domain', 'invalid_domain', (domain): [string] => [domain]),
  batch: { input: 'domain', args: (value): [string] => [value] },
  // database_records (ours): the TLDs with a known RDAP or WHOIS server.
  statusExtras: (engine) => ({ database_records: engine.knownTlds }),
  datasetAges: (engine) => datasetAgesOf(engine.dataDates),
  doc: WHOIS_DOC,
  doctor: {
    dns: true,
    outbound: { host: 'whois.iana.org', port: 43, why: "TCP port 43 to the registries' WHOIS servers" },
    freshness: { maxAgeDays: { [BOOTSTRAP_FILE]: 180 }, refresh: 'seclookup data update whois' },
  },
  cli: {
    input: 'a domain name (a subdomain is looked up as its registrable domain)',
    example: 'example.com',
    args: (input): [string] => [input],
    settings: {
      'whois-rdap-servers': {
        help: 'RDAP base URLs by TLD, TLD=URL,... (URL "none": use WHOIS); default: IANA\'s bootstrap',
        apply: (value) => ({ rdapServers: parseTldMap(value, '--whois-rdap-servers', (url) => url) }),
      },
      'whois-servers': {
        help: 'port-43 WHOIS servers by TLD, TLD=HOST[:PORT],...; default: data/whois/servers.json',
        apply: (value) => ({ whoisServers: parseTldMap(value, '--whois-servers', (server) => (parseServerAddress(server), server)) }),
      },
      'whois-iana-server': {
        help: "server asked for a TLD's WHOIS server, HOST[:PORT]; default: whois.iana.org",
        apply: (value) => (parseServerAddress(value, 'whois IANA server'), { ianaServer: value }),
      },
      'whois-port': {
        help: 'port of WHOIS servers named by other servers (referrals); default: 43',
        apply: (value) => {
          const port = Number(value);
          if (!/^\d+$/.test(value) || port < 1 || port > 65535) throw invalidOption(`not a port: ${JSON.stringify(value)}`);
          return { whoisPort: port };
        },
      },
    },
  },
  dataset: {
    help: `whois fetches IANA's RDAP bootstrap registry (https://data.iana.org/rdap/dns.json) and
rewrites whois/rdap-bootstrap.json when its services changed. An answer that is not a
bootstrap file, lists fewer than half the TLDs on file, or is older than the file is
refused and the file kept. Default timeout: 30000 ms.`,
    async update({ dataDir, mirror, timeoutMs, onProgress }): Promise<DatasetUpdateReport> {
      try {
        const report = await updateRdapBootstrap({ dataDir, mirror, timeoutMs, onProgress });
        const summary = `whois: RDAP bootstrap ${report.changed ? `updated (${report.before} -> ${report.after} TLDs)` : `unchanged (${report.after} TLDs)`}, published ${report.publication ?? 'unknown'}; ${report.changed ? `wrote ${report.path}` : `${report.path} not changed`}`;
        return { summary, ok: true, notes: report.changed ? ['Restart `seclookup serve` to use the new bootstrap.'] : [] };
      } catch (error) {
        if (!(error instanceof BootstrapUpdateError)) throw error;
        return {
          summary: `whois: RDAP bootstrap not updated: ${error.message}`,
          ok: false,
          notes: ['The bootstrap on file is unchanged and valid: check the network, or --mirror and --timeout.'],
        };
      }
    },
  },
});

/** `com=https://rdap.example/,de=none` -> `{ com: 'https://rdap.example/', de: null }`. */
function parseTldMap(text: string, flag: string, check: (value: string) => string): Record<string, string | null> {
  const map: Record<string, string | null> = {};
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw invalidOption(`${flag}: ${JSON.stringify(pair)} is not TLD=VALUE`);
    const tld = pair.slice(0, at).trim().toLowerCase().replace(/^\./, '');
    const value = pair.slice(at + 1).trim();
    map[tld] = value === 'none' ? null : check(value);
  }
  return map;
}
