/**
 * The client's request table (src/client/requests.ts) against the product modules it mirrors:
 * for every product, the request a call becomes names one of the module's routes, and the
 * arguments that route reads back from it prepare (validate and normalize) exactly as the
 * caller's arguments do in-process: the same query, or the same LookupError code. Also that the
 * client's methods are the registry's products, in its order.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { BATCH_INPUTS, REQUESTS, type ProductRequest } from '../../src/client/requests.js';
import { LookupError } from '../../src/errors.js';
import { parseQuery } from '../../src/lib/query.js';
import { createLookup, type LookupArgs } from '../../src/lookup.js';
import type { AnyProductModule, ProductEngine } from '../../src/products/module.js';
import { BUILT_PRODUCT_IDS, PRODUCT_MODULES, productModule, type BuiltProductId } from '../../src/products/registry.js';
import type { RouteInput } from '../../src/products/route.js';

const lookup = createLookup();
afterAll(() => lookup.close());

const LONG_UA = `Mozilla/5.0 ${'(compatible; x) '.repeat(2_000)}`;

/** Arguments to try per product: valid ones, edge cases and bad input. */
const SAMPLES: { [Id in BuiltProductId]: LookupArgs<Id>[] } = {
  useragent: [
    ['curl/8.5.0'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'],
    [''],
    ['  a+b&c=d/e?f#g%20'],
    [LONG_UA],
  ],
  webhookip: [
    ['140.82.112.5'],
    ['140.82.112.5', { provider: 'github' }],
    ['140.82.112.5', { provider: 'github,stripe' }],
    ['140.82.112.5', { provider: 'nope' }],
    ['140.82.112.5', {}],
    ['140.82.112.5', { provider: '' }],
    ['10.0.0.1'],
    ['x'],
    [''],
  ],
  geoip: [['8.8.8.8'], ['2001:4860:4860::8888'], [' ::ffff:8.8.8.8 '], ['10.0.0.1'], ['010.0.0.1'], ['']],
  timezone: [['1.1.1.1'], ['fe80::1%eth0'], ['']],
  emailauth: [['example.com'], ['EXAMPLE.com.'], ['192.0.2.1'], ['']],
  dnsbl: [['8.8.8.8'], ['8.8.8.8', {}], ['127.0.0.1'], ['not an ip']],
  emailval: [['postmaster@example.com'], ['a+b@example.com'], ['no-at-sign'], ['']],
  tls: [
    ['example.com'],
    ['example.com', { port: 8443 }],
    ['example.com', { port: '8443' }],
    ['example.com:8443'],
    ['https://example.com/x?y=1'],
    ['example.com', { port: 0 }],
    ['example.com', { port: 'x' }],
    ['example.com', { port: '' }],
    [''],
  ],
  whois: [['example.com'], ['www.example.co.uk'], ['-bad-.com'], ['']],
  asn: [['8.8.8.8'], ['2606:4700::1111'], ['192.168.1.1']],
  pwbreach: [
    ['password'],
    [''],
    [{ password: 'hunter2' }],
    [{ sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8' }],
    [{ sha1: 'xyz' }],
    [{ password: 'a', sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8' }],
    [{}],
  ],
  scamrisk: [
    [{ type: 'email', value: 'someone@example.com' }],
    [{ email: 'someone@example.com' }],
    [{ type: 'phone', value: '020 7946 0000', region: 'GB' }],
    [{ type: 'domain', value: 'metamask-io.com' }],
    [{ type: 'wallet', value: 'x' }],
    [{ type: 'nope', value: 'x' }],
    [{ type: 'email', value: undefined }],
    [{}],
  ],
  domainrep: [['example.com'], ['xn--80ak6aa92e.com'], ['.'], ['']],
  riskscore: [['185.220.101.1'], ['::1'], ['']],
};

/** What the server hands the route: the query as `parseQuery` decodes it, the body as JSON decodes it. */
function routeInput(request: ProductRequest): RouteInput {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) params.append(name, value);
  return {
    query: parseQuery(params.toString()),
    body: request.body === undefined ? undefined : (JSON.parse(JSON.stringify(request.body)) as Record<string, unknown>),
    headers: {},
  };
}

/** `prepare`'s answer: the query, or the LookupError code it throws. */
function prepared(module: AnyProductModule, args: unknown[]): unknown {
  try {
    return { query: (lookup.engine(module.id as BuiltProductId) as ProductEngine).prepare(...args) };
  } catch (error) {
    if (error instanceof LookupError) return { error: error.code };
    throw error;
  }
}

describe('the request table', () => {
  it('has one entry per built product, in registry order, and the client one method each', () => {
    expect(Object.keys(REQUESTS)).toEqual(BUILT_PRODUCT_IDS);
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', keys: {} });
    for (const id of BUILT_PRODUCT_IDS) {
      expect(typeof client[id], id).toBe('function');
      expect(typeof client.detailed[id], id).toBe('function');
    }
  });

  describe.each(BUILT_PRODUCT_IDS)('%s', (id) => {
    const module = productModule(id)!;
    it.each(SAMPLES[id].map((args) => [JSON.stringify(args).slice(0, 80), args] as const))('%s reads back as the same call', (_label, args) => {
      const request = (REQUESTS[id] as (...a: unknown[]) => ProductRequest)(...args);
      const route = module.routes.find((r) => r.method === request.method && r.path === request.path);
      expect(route, `${request.method} ${request.path} is a route of ${id}`).toBeDefined();
      const remote = prepared(module, route!.args(routeInput(request)));
      expect(remote).toEqual(prepared(module, args));
    });
  });

  it('has a batch method for exactly the products whose module declares a batch, with its input', () => {
    const declared = Object.fromEntries(PRODUCT_MODULES.flatMap((module) => (module.batch ? [[module.id, module.batch.input]] : [])));
    expect(BATCH_INPUTS).toEqual(declared);
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', keys: {} });
    expect(Object.keys(client.batch).sort()).toEqual(Object.keys(declared).sort());
  });

  it('refuses a dnsbl zone choice, which the service does not offer', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', keys: { dnsbl: 'x' } });
    await expect(client.dnsbl('8.8.8.8', { zones: 'zen.spamhaus.org' })).rejects.toMatchObject({ name: 'LookupError', code: 'invalid_request', status: 400 });
  });
});
