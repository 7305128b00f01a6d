import { defineProduct, type EngineContext } from '../module.js';
import { IP_LOOKUP_ROUTES } from '../route.js';
import { loadAbbreviations } from './abbreviations.js';
import { createTimezoneEngine } from './engine.js';
import { TIMEZONE_DOC } from './doc.js';
import type { TimezoneEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    timezone: TimezoneEngine;
  }
}

/**
 * timezone: IANA zone, UTC offset and abbreviation of a public IP. Reads the geoip product's
 * database (configure that one: `createLookup({ geoip: { database } })`, `--geoip-db`) and the
 * data folder's `timezone/abbreviations.json`.
 */
export default defineProduct({
  id: 'timezone',
  needs: ['geoip'],
  optionNames: {},
  // The abbreviation table is the data folder's (`<dataDir>/timezone/abbreviations.json`), read
  // now, and the geoip engine is built now: a missing or broken file of either fails this engine.
  createEngine: ({ dataDir, engine, now }: EngineContext<undefined, 'geoip'>) => {
    const abbreviations = loadAbbreviations(dataDir);
    return createTimezoneEngine({ geoip: engine('geoip'), now, abbreviations });
  },
  // SPEC: GET ?ip= and GET /lookup/{ip} (IPv6 URL-encoded).
  routes: IP_LOOKUP_ROUTES,
  doc: TIMEZONE_DOC,
  // The table names its tzdata release, not a date: undated (the location is geoip's, dated there).
  datasetAges: (engine) => [{ dataset: 'abbreviations.json', builtAtMs: null, ...(engine.tzdata === null ? {} : { version: `tzdata ${engine.tzdata}` }) }],
  batch: { input: 'ip', args: (value): [string] => [value] },
  cli: {
    input: 'a public IPv4 or IPv6 address',
    example: '1.1.1.1',
    args: (input): [string] => [input],
  },
});
