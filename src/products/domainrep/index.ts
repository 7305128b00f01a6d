import { datasetAgesOf, type DatasetDate } from '../../lib/datasets.js';
import { checkOptionalMs } from '../../lib/option-checks.js';
import { defineProduct, type EngineContext } from '../module.js';
import { getLookupRoutes } from '../route.js';
import { checkDomainZonesOption, configuredDomainZones, loadBrands, loadPhishingLists, loadTldRisk } from './data.js';
import { checkCacheSize, createDomainRepEngine, type CachedDomainRep } from './engine.js';
import type { DomainRepEngineOptions } from './types.js';
import { DOMAINREP_DOC } from './doc.js';
import type { DomainRepEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    domainrep: DomainRepEngine;
  }
}

/** domainrep: a 0-100 risk score for a domain from weighted signals (whois age, email auth, DNS, blocklists, lexical). */
export default defineProduct({
  id: 'domainrep',
  needs: ['whois', 'emailauth'],
  optionNames: { zones: true, signalTimeoutMs: true, maxTtlMs: true, cacheSize: true },
  checkOptions: (options) => {
    checkDomainZonesOption(options.zones);
    checkOptionalMs(options.signalTimeoutMs, 'domainrep signalTimeoutMs');
    checkOptionalMs(options.maxTtlMs, 'domainrep maxTtlMs');
    checkCacheSize(options.cacheSize);
  },
  createEngine: ({ dataDir, options, cache, dns, now, engine }: EngineContext<DomainRepEngineOptions, 'whois' | 'emailauth'>) => {
    const dataDates: DatasetDate[] = [];
    return createDomainRepEngine({
      zones: configuredDomainZones(dataDir, options, dataDates),
      tldRisk: loadTldRisk(dataDir, dataDates),
      brands: loadBrands(dataDir, dataDates),
      // The phishing lists record no date; scamrisk, which updates them, reports theirs.
      phishing: loadPhishingLists(dataDir),
      dataDates,
      dns,
      // The whois and emailauth products' own engines (and caches), built on first use.
      whois: () => engine('whois'),
      emailauth: () => engine('emailauth'),
      cache: cache<CachedDomainRep>({ maxEntries: checkCacheSize(options?.cacheSize) }),
      now,
      signalTimeoutMs: options?.signalTimeoutMs,
      maxTtlMs: options?.maxTtlMs,
    });
  },
  // SPEC: GET ?domain= and GET /lookup/{domain}.
  routes: getLookupRoutes('domain', 'invalid_domain', (domain): [string] => [domain]),
  doc: DOMAINREP_DOC,
  datasetAges: (engine) => datasetAgesOf(engine.dataDates),
  doctor: { dns: true },
  batch: { input: 'domain', args: (value): [string] => [value] },
  cli: {
    input: 'a domain name',
    example: 'example.com',
    args: (input): [string] => [input],
  },
});
