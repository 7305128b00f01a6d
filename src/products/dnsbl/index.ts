import { datasetAgesOf, type DatasetDate } from '../../lib/datasets.js';
import { checkOptionalMs } from '../../lib/option-checks.js';
import { defineProduct, type EngineContext } from '../module.js';
import { getLookupRoutes } from '../route.js';
import { checkCacheSize, createDnsblEngine, type CachedDnsbl } from './engine.js';
import type { DnsblEngineOptions, DnsblOptions } from './types.js';
import { checkZonesOption, configuredZones } from './zones.js';
import { DNSBL_DOC } from './doc.js';
import type { DnsblEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    dnsbl: DnsblEngine;
  }
}

/** dnsbl: is a public IPv4 address listed in the configured DNS blocklists? */
export default defineProduct({
  id: 'dnsbl',
  optionNames: { zones: true, zoneTimeoutMs: true, cacheSize: true },
  checkOptions: (options) => {
    checkZonesOption(options.zones);
    checkOptionalMs(options.zoneTimeoutMs, 'dnsbl zoneTimeoutMs');
    checkCacheSize(options.cacheSize);
  },
  createEngine: ({ dataDir, options, cache, dns, now }: EngineContext<DnsblEngineOptions>) => {
    const dataDates: DatasetDate[] = [];
    return createDnsblEngine({
      zones: configuredZones(dataDir, options, dataDates),
      dataDates,
      dns,
      cache: cache<CachedDnsbl>({ maxEntries: checkCacheSize(options?.cacheSize) }),
      now,
      zoneTimeoutMs: options?.zoneTimeoutMs,
    });
  },
  // SPEC: GET ?ip= and GET /lookup/{ip}. Every configured zone is checked: no zone choice over HTTP.
  routes: getLookupRoutes('ip', 'invalid_ip', (ip): [string, DnsblOptions?] => [ip]),
  batch: { input: 'ip', args: (value): [string, DnsblOptions?] => [value] },
  // The number of zones configured: the "records" a DNSBL check consults.
  statusExtras: (engine) => ({ database_records: engine.zones.length }),
  datasetAges: (engine) => datasetAgesOf(engine.dataDates),
  doc: DNSBL_DOC,
  doctor: { dns: true },
  cli: {
    input: 'a public IPv4 address',
    example: '8.8.8.8 --zones zen.spamhaus.org,bl.spamcop.net',
    flags: { zones: 'query only these configured zones (e.g. zen.spamhaus.org,bl.spamcop.net)' },
    args: (input, flags): [string, DnsblOptions?] => [input, { zones: flags.zones }],
  },
});
