import { invalidOption } from '../../errors.js';
import { defineProduct, type EngineContext } from '../module.js';
import { getLookupRoutes, queryValue } from '../route.js';
import { checkTlsOptions, createTlsEngine, type CachedTls } from './engine.js';
import { PORT_TEXT } from './target.js';
import type { TlsEngineOptions, TlsOptions } from './types.js';
import { TLS_DOC } from './doc.js';
import type { TlsEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    tls: TlsEngine;
  }
}

/** tls: certificate metadata for a public host, from one TLS handshake. */
export default defineProduct({
  id: 'tls',
  optionNames: { timeouts: true, cacheSize: true, cacheTtlMs: true },
  checkOptions: (options) => void checkTlsOptions(options),
  createEngine: ({ options, cache, outbound, now }: EngineContext<TlsEngineOptions>) => {
    const { cacheSize, cacheTtlMs } = checkTlsOptions(options);
    return createTlsEngine({ outbound, now, cache: cache<CachedTls>({ maxEntries: cacheSize, ttlMs: cacheTtlMs }) }, options);
  },
  // SPEC: GET ?host= and GET /lookup/{host}; the port parameter's name is ours: `port`.
  routes: getLookupRoutes('host', 'invalid_host', (host, query): [string, TlsOptions] => [host, { port: queryValue(query, 'port') }]),
  doc: TLS_DOC,
  doctor: { dns: true },
  // Port 443 (no `port` in a batch).
  batch: { input: 'host', args: (value): [string, TlsOptions?] => [value] },
  cli: {
    input: 'a host, host:port or https:// URL',
    example: 'example.com:443',
    flags: { port: 'the port to check (default: the one in INPUT, else 443)' },
    args: (input, flags): [string, TlsOptions] => [input, { port: cliPort(flags.port) }],
    settings: {
      'tls-timeout': {
        help: 'tls: deadline of a whole check in ms, DNS included (default 5000)',
        apply: (value) => ({ timeouts: { totalMs: positiveMs(value, 'tls-timeout') } }),
      },
    },
  },
});

/** `lookup tls --port`: a port, else a mistake of the command line, said naming the flag. */
function cliPort(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const port = PORT_TEXT.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(port >= 1 && port <= 65535)) throw invalidOption(`--port must be a whole number from 1 to 65535 (got ${JSON.stringify(text)})`);
  return text;
}

function positiveMs(text: string, name: string): number {
  const ms = /^[1-9][0-9]*$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(ms)) throw invalidOption(`${name} must be a positive whole number of milliseconds (got ${JSON.stringify(text)})`);
  return ms;
}
