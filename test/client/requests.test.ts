/**
 * The client's request table (src/client/requests.ts) against the product modules it mirrors:
 * for every product, the request a call becomes names one of the module's routes, and the
 * arguments that route reads back from it prepare (validate and normalize) exactly as the
 * caller's arguments do in-process: the same query, or the same LookupError code. Arguments a
 * request cannot carry as they are (a BigInt, a Symbol, an array or an object where a string
 * goes) the client refuses itself (src/client/args.ts), with the code `prepare` throws for them.
 * Also that the client's methods are the registry's products, in its order.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/client/args.js';
import { createClient } from '../../src/client/index.js';
import { BATCH_INPUTS, REQUESTS, type ProductRequest } from '../../src/client/requests.js';
import { LookupError } from '../../src/errors.js';
import { MAX_DOMAIN_INPUT_LENGTH } from '../../src/lib/domain.js';
import { parseQuery } from '../../src/lib/query.js';
import { createLookup, type LookupArgs } from '../../src/lookup.js';
import type { AnyProductModule, ProductEngine } from '../../src/products/module.js';
import { BUILT_PRODUCT_IDS, PRODUCT_MODULES, productModule, type BuiltProductId } from '../../src/products/registry.js';
import type { RouteInput } from '../../src/products/route.js';
import { ECHO_LENGTH, MAX_INPUT_LENGTH as MAX_EMAIL_INPUT } from '../../src/products/emailval/normalize.js';
import { MAX_INPUT_LENGTH as MAX_HOST_INPUT } from '../../src/products/tls/target.js';
import type { WebhookIpEngine } from '../../src/products/webhookip/engine.js';

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
    // Wrong on purpose (the type refuses them; a JavaScript caller can still send them).
    [{ type: 'wallet', value: 'x' } as never],
    [{ type: 'nope', value: 'x' } as never],
    [{ type: 'email', value: undefined } as never],
    [{} as never],
  ],
  domainrep: [['example.com'], ['xn--80ak6aa92e.com'], ['.'], ['']],
  riskscore: [['185.220.101.1'], ['::1'], ['']],
};

/** Values of every JavaScript type, for where a string goes (`['8.8.8.8']` and `{ toString }` read as an address once in a URL). */
const ODD_VALUES: readonly unknown[] = [
  10n,
  Symbol('8.8.8.8'),
  ['8.8.8.8'],
  { toString: () => '8.8.8.8' },
  new String('example.com'),
  42,
  true,
  null,
  undefined,
  () => '8.8.8.8',
  {},
];

/** Each product's arguments with an odd value in each place a string (or, for tls's port, a number or a string) goes. */
const ODD_SAMPLES: { [Id in BuiltProductId]: unknown[][] } = {
  useragent: ODD_VALUES.map((v) => [v]),
  webhookip: [...ODD_VALUES.map((v) => [v]), ...ODD_VALUES.map((v) => ['140.82.112.5', { provider: v }])],
  geoip: ODD_VALUES.map((v) => [v]),
  timezone: ODD_VALUES.map((v) => [v]),
  emailauth: ODD_VALUES.map((v) => [v]),
  dnsbl: ODD_VALUES.map((v) => [v]),
  emailval: ODD_VALUES.map((v) => [v]),
  // Not a Symbol port: in-process, that is a raw TypeError (the memo key's template), not a LookupError to compare with.
  tls: [...ODD_VALUES.map((v) => [v]), ...ODD_VALUES.filter((v) => typeof v !== 'symbol').map((v) => ['example.com', { port: v }])],
  whois: ODD_VALUES.map((v) => [v]),
  asn: ODD_VALUES.map((v) => [v]),
  pwbreach: [
    ...ODD_VALUES.map((v) => [v]),
    ...ODD_VALUES.map((v) => [{ password: v }]),
    ...ODD_VALUES.map((v) => [{ sha1: v }]),
    ...ODD_VALUES.map((v) => [{ password: v, sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8' }]),
    ...ODD_VALUES.map((v) => [{ password: 'hunter2', sha1: v }]),
    ['x'.repeat(70_000)],
    ['é'.repeat(600)],
  ],
  scamrisk: [
    ...ODD_VALUES.map((v) => [v]),
    ['8.8.8.8'],
    ...ODD_VALUES.map((v) => [{ type: 'ip', value: v }]),
    ...ODD_VALUES.map((v) => [{ type: v, value: '8.8.8.8' }]),
    ...ODD_VALUES.map((v) => [{ email: v }]),
    ...ODD_VALUES.map((v) => [{ type: 'phone', value: '020 7946 0000', region: v }]),
    ...ODD_VALUES.map((v) => [{ type: 'ip', value: '8.8.8.8', note: v }]),
  ],
  domainrep: ODD_VALUES.map((v) => [v]),
  riskscore: ODD_VALUES.map((v) => [v]),
};

/** Long User-Agents: blank or not in their first 500 characters and in the rest, a surrogate pair across the cut. */
const LONG_UAS: readonly string[] = [
  `Mozilla/5.0 ${'x'.repeat(70_000)}`,
  `${' '.repeat(600)}curl/8.5.0`,
  ' '.repeat(70_000),
  `${'a'.repeat(499)}\u{1F600}${'b'.repeat(100)}`,
  `${'a'.repeat(498)}\u{1F600}${'b'.repeat(100)}`,
  `${'a'.repeat(500)}\u{1F600}${'b'.repeat(100)}`,
  `${' '.repeat(501)}x${' '.repeat(100)}`,
];

const LONG = 'a'.repeat(20_000);
const PAD = ' '.repeat(20_000);

/**
 * Inputs longer than a request line (16 KiB) or a body (64 KiB) may carry, and inputs about the
 * engines' length limits: the client refuses them as the engine does, or sends them cut to what
 * the engine reads, for its answer.
 */
const LONG_SAMPLES: { [Id in BuiltProductId]: unknown[][] } = {
  useragent: [[`Mozilla/5.0 ${LONG}`]],
  webhookip: [
    [LONG],
    [`${PAD}140.82.112.5${PAD}`, { provider: 'github' }],
    ['140.82.112.5', { provider: LONG }],
    ['140.82.112.5', { provider: `${'GitHub, '.repeat(3_000)}stripe` }],
    ['140.82.112.5', { provider: `${'github,'.repeat(3_000)}nope,${LONG}` }],
    ['140.82.112.5', { provider: ' , '.repeat(3_000) }],
    // A final sigma at the end of the quoted part: ς or σ by what follows it up to a letter.
    ['140.82.112.5', { provider: `github, ${'a'.repeat(63)}Σ ${LONG}, stripe` }],
    ['140.82.112.5', { provider: `${'a'.repeat(63)}Σ${"'".repeat(5)}b${LONG}` }],
    ['140.82.112.5', { provider: `${'a'.repeat(63)}Σ${"'".repeat(2_000)}` }],
    ['140.82.112.5', { provider: `${'a'.repeat(63)}Σ${"'".repeat(5)}Ⓐ${LONG}` }],
    ['140.82.112.5', { provider: `${'a'.repeat(63)}Σ${"'".repeat(5)} ${LONG}` }],
    ['140.82.112.5', { provider: `${'\u{1F600}'.repeat(40)}${LONG}` }],
  ],
  geoip: [
    [LONG],
    [PAD],
    [`${PAD}8.8.8.8${PAD}`],
    [`8.8.8.8${PAD}`],
    [`${' '.repeat(30)}8.8.8.8${PAD}`],
    [`${PAD}not an address`],
    [`${' '.repeat(64)}x${PAD}`],
    [`${' '.repeat(65)}10.0.0.1${PAD}`],
    [`${'\u00a0'.repeat(100)}2001:4860:4860::8888\u2028`],
    ['a'.repeat(46)],
    [` ${'b'.repeat(46)} `],
  ],
  timezone: [[LONG], [`${PAD}1.1.1.1`]],
  emailauth: [[LONG], [PAD], [`${PAD}example.com${PAD}`], ['a'.repeat(1_025)], [`${' '.repeat(100)}${'a'.repeat(1_020)}.com`]],
  dnsbl: [[LONG], [`${PAD}8.8.8.8`]],
  emailval: [
    [`${LONG}@example.com`],
    [`${PAD}someone@example.com${PAD}`],
    [PAD],
    [`\n${LONG}@example.com`],
    [`${LONG}\u0000`],
    [`${PAD}\u0007a@example.com`],
    ['a'.repeat(600)],
    [`${'a'.repeat(511)} ${' '.repeat(100)}`],
    [`${'é'.repeat(255)}\u{1F600}${LONG}`],
    [`${'x'.repeat(250)}      ${LONG}`],
  ],
  tls: [[LONG], [PAD], [`${' '.repeat(2_040)}example.com`], ['a'.repeat(2_048)]],
  whois: [[LONG], [`${PAD}example.com`], ['a'.repeat(1_024)]],
  asn: [[LONG], [`${PAD}8.8.8.8`]],
  pwbreach: [[{ sha1: LONG }], [{ sha1: LONG, password: 'x' }], [{ sha1: 'a'.repeat(41) }]],
  scamrisk: [
    [{ type: 'url', value: `https://example.com/${'a'.repeat(70_000)}` }],
    [{ username: 'u'.repeat(70_000) }],
    [{ type: `x${LONG}`, value: '1' }],
    [{ type: 'email', value: LONG, region: 'GB' }],
    [{ type: 'phone', value: LONG, region: LONG }],
    [{ type: 'ip', value: 'x'.repeat(2_048) }],
    [{ type: 'ip', value: 'x'.repeat(2_049) }],
    [{ type: 'address', value: LONG }],
    [{ type: 'ip', value: '8.8.8.8', note: LONG }],
    [{ value: LONG }],
  ],
  domainrep: [[LONG], [`${PAD}example.com`]],
  riskscore: [[LONG], [`${PAD}185.220.101.1`]],
};

/** A label for it.each: the arguments in short, whatever their type. */
function label(args: readonly unknown[]): string {
  const text = args.map((arg) => {
    if (typeof arg === 'bigint') return `${arg}n`;
    if (typeof arg === 'symbol' || typeof arg === 'function') return String(arg);
    if (arg instanceof String) return `new String(${JSON.stringify(String(arg))})`;
    if (typeof arg === 'object' && arg !== null && !Array.isArray(arg)) {
      return `{ ${Object.entries(arg)
        .map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v.slice(0, 20)) : label([v]).slice(1, -1)}`)
        .join(', ')} }`;
    }
    return typeof arg === 'string' && arg.length > 40 ? `<${arg.length} characters>` : (JSON.stringify(arg) ?? String(arg));
  });
  return `(${text.join(', ')})`;
}

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

/**
 * What the client's call comes to on the service: the LookupError code the client throws itself
 * (before any request), or `prepare`'s answer to the arguments the route reads from its request.
 */
function remotely(module: AnyProductModule, args: unknown[]): unknown {
  let request: ProductRequest;
  try {
    request = (REQUESTS[module.id as BuiltProductId] as (...a: unknown[]) => ProductRequest)(...args);
  } catch (error) {
    if (error instanceof LookupError) return { error: error.code };
    throw error;
  }
  const route = module.routes.find((r) => r.method === request.method && r.path === request.path);
  expect(route, `${request.method} ${request.path} is a route of ${module.id}`).toBeDefined();
  return prepared(module, route!.args(routeInput(request)));
}

/** `prepare`'s answer with its message: the query, or the LookupError's code, status and message. */
function answered(module: AnyProductModule, args: unknown[]): unknown {
  try {
    return { query: (lookup.engine(module.id as BuiltProductId) as ProductEngine).prepare(...args) };
  } catch (error) {
    if (error instanceof LookupError) return { error: error.code, status: error.status, message: error.message };
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
      expect(remotely(module, args)).toEqual(prepared(module, args));
    });

    it.each(ODD_SAMPLES[id].map((args) => [label(args), args] as const))('%s: refused as in-process, or read back as the same call', (_label, args) => {
      expect(remotely(module, args)).toEqual(prepared(module, args));
    });
  });

  describe.each(BUILT_PRODUCT_IDS)('%s, long inputs', (id) => {
    const module = productModule(id)!;
    it.each(LONG_SAMPLES[id].map((args) => [label(args), args] as const))('%s: refused as in-process, or sent short for the same answer', (_label, args) => {
      let request: ProductRequest;
      try {
        request = (REQUESTS[id] as (...a: unknown[]) => ProductRequest)(...args);
      } catch (error) {
        expect(error).toBeInstanceOf(LookupError);
        const { code, status, message } = error as LookupError;
        expect({ error: code, status, message }).toEqual(answered(module, args));
        return;
      }
      // Far under a request line's limit (16 KiB in Node, 8 KiB in many proxies) and a body's (64 KiB).
      const query = Object.entries(request.query ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined);
      expect(new URLSearchParams(query).toString().length).toBeLessThan(4_200);
      expect(JSON.stringify(request.body ?? {}).length).toBeLessThan(8_192);
      const route = module.routes.find((r) => r.method === request.method && r.path === request.path)!;
      expect(answered(module, route.args(routeInput(request)))).toEqual(answered(module, args));
    });
  });

  it("copies the engines' length limits", () => {
    expect(LIMITS.domain).toBe(MAX_DOMAIN_INPUT_LENGTH);
    expect(LIMITS.host).toBe(MAX_HOST_INPUT);
    expect([LIMITS.email, LIMITS.emailEcho]).toEqual([MAX_EMAIL_INPUT, ECHO_LENGTH]);
    // Not exported: the longest address text parseIp reads (the long samples check longer text is refused alike).
    const longest = '2606:4700:0000:0000:0000:0000:100.100.100.100';
    expect(longest).toHaveLength(LIMITS.ip);
    expect((lookup.engine('geoip') as ProductEngine).prepare(longest)).toMatchObject({ ip: '2606:4700::6464:6464' });
    // No provider is named longer than a message quotes: a longer name is one the engine does not know.
    const names = (lookup.engine('webhookip') as WebhookIpEngine).providers.flatMap(({ id, aliases }) => [id, ...aliases]);
    expect(Math.max(...names.map((name) => name.length))).toBeLessThanOrEqual(LIMITS.quoted);
  });

  it('sends a long User-Agent cut to the characters the engine reads (and two more at most), for the same answer', () => {
    const module = productModule('useragent')!;
    for (const ua of LONG_UAS) {
      const request = REQUESTS.useragent(ua);
      expect((request.body as { ua: string }).ua.length, label([ua])).toBeLessThanOrEqual(502);
      expect(remotely(module, [ua]), label([ua])).toEqual(prepared(module, [ua]));
    }
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
