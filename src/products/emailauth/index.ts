import { defineProduct, type EngineContext } from '../module.js';
import { getLookupRoutes } from '../route.js';
import { createEmailAuthEngine, emailAuthCacheSize, type CachedEmailAuth } from './engine.js';
import { DKIM_SELECTORS, type EmailAuthEngineOptions } from './types.js';
import { EMAILAUTH_DOC } from './doc.js';
import type { EmailAuthEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    emailauth: EmailAuthEngine;
  }
}

/** emailauth: SPF, DKIM and DMARC presence for a domain, over the shared DNS resolver. */
export default defineProduct({
  id: 'emailauth',
  optionNames: { cacheSize: true },
  checkOptions: (options) => void emailAuthCacheSize(options.cacheSize),
  createEngine: ({ options, cache, dns, now }: EngineContext<EmailAuthEngineOptions>) =>
    createEmailAuthEngine({ dns, now, cache: cache<CachedEmailAuth>({ maxEntries: emailAuthCacheSize(options?.cacheSize) }) }, options),
  // SPEC: GET ?domain= and GET /lookup/{domain}.
  routes: getLookupRoutes('domain', 'invalid_domain', (domain): [string] => [domain]),
  batch: { input: 'domain', args: (value): [string] => [value] },
  // database_records (ours): the DKIM selectors every lookup probes; emailauth holds no database.
  statusExtras: () => ({ database_records: DKIM_SELECTORS.length }),
  doc: EMAILAUTH_DOC,
  doctor: { dns: true },
  cli: {
    input: 'a domain name',
    example: 'example.com',
    args: (input): [string] => [input],
  },
});
