import { invalidOption } from '../../errors.js';
import { defineProduct, type EngineContext } from '../module.js';
import { IP_LOOKUP_ROUTES } from '../route.js';
import { countryZonesIn } from './country-zones.js';
import { checkGeoIpOptions, createGeoIpEngine } from './engine.js';
import type { GeoIpEngineOptions } from './types.js';
import { GEOIP_DOC } from './doc.js';
import type { GeoIpEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    geoip: GeoIpEngine;
  }
}

/** geoip: location and network metadata of a public IP from local MMDB files (DB-IP City Lite by default). */
export default defineProduct({
  id: 'geoip',
  needs: ['asn'],
  optionNames: {
    database: true,
    databases: true,
    provider: true,
    asn: true,
    asnDatabase: true,
    reverseDns: true,
    lazy: true,
    watch: true,
    watchIntervalMs: true,
    cacheSize: true,
    onReload: true,
    onReloadError: true,
  },
  checkOptions: (options) => void checkGeoIpOptions(options),
  createEngine: ({ options, dns, engine, dataDir }: EngineContext<GeoIpEngineOptions, 'asn'>) =>
    // The data folder's zone.tab, read now (once per folder): a missing one fails the build, naming it.
    createGeoIpEngine({ options, dns, engine, countryZones: countryZonesIn(dataDir) }),
  // SPEC: GET ?ip= and GET /lookup/{ip} (IPv6 URL-encoded).
  routes: IP_LOOKUP_ROUTES,
  batch: { input: 'ip', args: (value): [string] => [value] },
  // The search-tree nodes of the location database files: the closest thing an MMDB file has
  // to a record count (its data records are shared between networks and not counted anywhere).
  statusExtras: (engine) => ({ database_records: engine.databaseRecords }),
  // Each MMDB file's build date, from its metadata.
  datasetAges: (engine) => engine.info().files.map((file) => ({ dataset: `mmdb-${file.role}`, builtAtMs: file.builtAt.getTime() })),
  // DB-IP publishes monthly; MaxMind twice a week.
  doctor: {
    freshness: {
      maxAgeDays: { 'mmdb-ipv4': 180, 'mmdb-ipv6': 180, 'mmdb-both': 180, 'mmdb-asn': 180 },
      refresh: 'a newer database (docs/products/geoip.md)',
    },
  },
  doc: GEOIP_DOC,
  cli: {
    input: 'a public IPv4 or IPv6 address',
    example: '8.8.8.8',
    args: (input): [string] => [input],
    // One answer, then exit: read only the file that address needs (serve reads both at start).
    oneShot: { lazy: true },
    settings: {
      'geoip-db': {
        help: 'MMDB file(s): FILE for both families (MaxMind GeoIP2/GeoLite2 City or Country), or IPV4_FILE,IPV6_FILE (default: the DB-IP City Lite pair)',
        apply: (value) => {
          const files = value.split(',').map((file) => file.trim());
          if (files.length === 1 && files[0]) return { database: files[0] };
          if (files.length === 2 && files[0] && files[1]) return { databases: { ipv4: files[0], ipv6: files[1] } };
          throw invalidOption('expected FILE or IPV4_FILE,IPV6_FILE');
        },
      },
      'geoip-asn-db': {
        help: 'MaxMind GeoLite2-ASN or GeoIP2-ISP file for connection isp/org/asn (default: the asn product)',
        apply: (value) => ({ asnDatabase: value }),
      },
      'geoip-reverse-dns': {
        help: 'on, off, or the budget in ms: connection.domain from a PTR query (default: off; on waits at most 150 ms)',
        apply: (value) => {
          if (value === 'off') return { reverseDns: false };
          if (value === 'on') return { reverseDns: true };
          if (/^[1-9]\d{0,5}$/.test(value)) return { reverseDns: { timeoutMs: Number(value) } };
          throw invalidOption(`expected on, off or a number of milliseconds (got ${JSON.stringify(value)})`);
        },
      },
    },
  },
});
