import { USERAGENT_DOC } from './doc.js';
import { defineProduct, type EngineContext } from '../module.js';
import { bodyString, queryValue } from '../route.js';
import { createUserAgentEngine, userAgentCacheSize, type CachedUserAgent } from './engine.js';
import type { UserAgentEngineOptions } from './types.js';
import type { UserAgentEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    useragent: UserAgentEngine;
  }
}

const FIELDS = ['ua', 'user_agent'] as const;

/** useragent: parse a User-Agent (ua-parser-js 1.x + isbot), cached per truncated UA. */
export default defineProduct({
  id: 'useragent',
  optionNames: { cacheSize: true },
  checkOptions: (options) => void userAgentCacheSize(options.cacheSize),
  createEngine: ({ options, cache }: EngineContext<UserAgentEngineOptions>) =>
    createUserAgentEngine(options, cache<CachedUserAgent>({ maxEntries: userAgentCacheSize(options?.cacheSize) })),
  // SPEC: GET ?ua= / ?user_agent=, GET /lookup/{ua}, POST JSON { ua | user_agent }.
  routes: [
    { method: 'GET', path: 'lookup', inputError: 'invalid_user_agent', args: ({ query }): [string] => [queryValue(query, ...FIELDS) ?? ''] },
    {
      method: 'GET',
      path: 'lookup/:ua',
      inputError: 'invalid_user_agent',
      // `/lookup/?ua=...` (a trailing slash) has an empty path value: the query's is read then.
      args: ({ pathValue, query }): [string] => [pathValue || (queryValue(query, ...FIELDS) ?? '')],
    },
    { method: 'POST', path: 'lookup', inputError: 'invalid_user_agent', args: ({ body }): [string] => [bodyString(body, ...FIELDS) ?? ''] },
  ],
  doc: USERAGENT_DOC,
  batch: { input: 'ua', args: (value): [string] => [value] },
  cli: {
    input: 'a User-Agent string (quote it)',
    example: '"Mozilla/5.0 (Windows NT 10.0; rv:125.0) Gecko/20100101 Firefox/125.0"',
    args: (input): [string] => [input],
  },
});
