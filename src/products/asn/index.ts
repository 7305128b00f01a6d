import { invalidOption } from '../../errors.js';
import { defineProduct, type EngineContext } from '../module.js';
import { IP_LOOKUP_ROUTES } from '../route.js';
import { checkCacheSize, checkZone, createAsnEngine, resolveCymru, type CachedAsn } from './engine.js';
import { checkLocalSourceOptions, openLocalSource } from './sources.js';
import type { AsnEngineOptions } from './types.js';
import { ASN_DOC } from './doc.js';
import type { AsnEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    asn: AsnEngine;
  }
}

/** asn: the origin AS, organization, network and network type of a public IP. */
export default defineProduct({
  id: 'asn',
  optionNames: { database: true, csv: true, indexDir: true, cymru: true, cacheSize: true },
  checkOptions: (options) => {
    checkLocalSourceOptions(options);
    resolveCymru(options.cymru);
    checkCacheSize(options.cacheSize);
  },
  createEngine: ({ options = {}, cache, dns, now }: EngineContext<AsnEngineOptions>) => {
    const cacheSize = checkCacheSize(options.cacheSize);
    const local = openLocalSource(options);
    const cymru = options.cymru !== undefined && options.cymru !== false;
    return createAsnEngine({
      local,
      cymru: options.cymru,
      dns,
      now,
      cache: cymru ? cache<CachedAsn>({ maxEntries: cacheSize }) : null,
      jsonMemoSize: cacheSize,
    });
  },
  // SPEC: GET ?ip= and GET /lookup/{ip} (IPv6 URL-encoded).
  routes: IP_LOOKUP_ROUTES,
  batch: { input: 'ip', args: (value): [string] => [value] },
  statusExtras: (engine) => ({ database_records: engine.databaseRecords }),
  // The build time of the local data (the MMDB metadata, the npm package's or the CSV files').
  datasetAges: (engine) => [{ dataset: 'asn', builtAtMs: engine.source.builtAt.getTime() }],
  doctor: { freshness: { maxAgeDays: { asn: 180 }, refresh: 'newer data (docs/products/asn.md)' } },
  doc: ASN_DOC,
  cli: {
    input: 'a public IPv4 or IPv6 address',
    example: '8.8.8.8',
    args: (input): [string] => [input],
    settings: {
      'asn-db': {
        help: 'asn: a MaxMind ASN database (GeoLite2-ASN .mmdb) instead of the ip-location-db CSV data',
        apply: (value) => ({ database: value }),
      },
      'asn-csv': {
        help: 'asn: ip-location-db asn CSV files (comma-separated) instead of the npm package',
        apply: (value) => ({
          csv: value
            .split(',')
            .map((file) => file.trim())
            .filter(Boolean),
        }),
      },
      'asn-index-dir': {
        help: 'asn: folder for the compiled CSV index (default: beside the CSV files)',
        apply: (value) => ({ indexDir: value }),
      },
      'asn-cymru': {
        help: 'asn: "on" to ask Team Cymru\'s origin.asn.cymru.com over DNS too, or ZONE,ZONE6 (default: off)',
        apply: (value) => ({ cymru: cymruSetting(value) }),
      },
    },
  },
});

/** `on`/`off`, or the two zones separated by a comma. */
function cymruSetting(value: string): AsnEngineOptions['cymru'] {
  const text = value.trim().toLowerCase();
  if (text === 'on' || text === 'true' || text === '1') return true;
  if (text === 'off' || text === 'false' || text === '0' || text === '') return false;
  const [zone, zone6, extra] = text.split(',').map((part) => part.trim());
  if (!zone || !zone6 || extra !== undefined) throw invalidOption(`expected on, off or ZONE,ZONE6 (got ${JSON.stringify(value)})`);
  return { zone: checkZone(zone, 'zone'), zone6: checkZone(zone6, 'zone6') };
}
