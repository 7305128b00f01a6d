/**
 * The README's table of the fifteen products gives one curl command each. Each is sent here as
 * curl would send it (its headers, its body, its URL) to the API as `serve` mounts it, with a key
 * of that product in place of `$K`: every one reaches its route with a valid input and a valid key.
 * The DNS-using products ask a loopback DNS server that knows the README's domains; whois and tls,
 * which would ask the internet, may answer 502 lookup_failed here and nothing else.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, createLookup, createMemoryMeter, issueKeys } from '../src/index.js';
import { createListener } from '../adapters/node.js';
import { PRODUCT_IDS } from '../src/products/catalog.js';
import { SERVICE_MODULES } from '../src/products/registry.js';
import { startDnsServer, type DnsTestServer } from './servers/dns-server.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const table = readme.slice(readme.indexOf('## The fifteen products'), readme.indexOf('## Three ways to use it'));

interface Curl {
  product: string;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Splits a command line as a POSIX shell would for these commands: words, '...' and "..." quoting. */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** The curl command of each table row: `| [product](...) | ... | `curl ...` |`. */
function curls(): Curl[] {
  const found: Curl[] = [];
  for (const [, product, command] of table.matchAll(/^\| \[(\w+)\]\([^)]*\) \|[^|]*\| `(curl [^`]+)` \|$/gm)) {
    const args = words(command).slice(1);
    const curl: Curl = { product, method: 'GET', url: '', headers: {} };
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '-H') {
        const [name, ...value] = args[++i].split(':');
        curl.headers[name.trim().toLowerCase()] = value.join(':').trim();
      } else if (args[i] === '-d') {
        curl.body = args[++i];
        curl.method = 'POST';
      } else curl.url = args[i];
    }
    // curl's own defaults: http:// when no scheme, form content type for -d unless one is given.
    if (curl.body !== undefined) curl.headers['content-type'] ??= 'application/x-www-form-urlencoded';
    found.push(curl);
  }
  return found;
}

let dns: DnsTestServer;
let server: http.Server;
let port: number;
const keys = new Map<string, string>();

beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      'gmail.com': [{ type: 'MX', exchange: 'gmail-smtp-in.l.google.com', priority: 5 }],
      'github.com': [{ type: 'TXT', data: 'v=spf1 include:_spf.google.com ~all' }],
      '_dmarc.github.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
      'example.com': [{ type: 'A', address: '93.184.215.14' }],
    },
  });
  const meter = createMemoryMeter();
  // As serve's first start makes them: captcha's pair is a site key pair of its own making.
  for (const product of PRODUCT_IDS) {
    const starterKeys = SERVICE_MODULES.find((module) => module.id === product)?.starterKeys;
    keys.set(product, (starterKeys ? await starterKeys(meter) : await issueKeys(meter, { product })).secretKey);
  }
  const api = createApi({ lookup: createLookup({ dns: { servers: [dns.address] } }), meter });
  server = http.createServer(createListener(api));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await dns?.close();
});

describe("the README's curl for each product", () => {
  it('has one curl command for each of the fifteen products', () => {
    expect(
      curls()
        .map((c) => c.product)
        .sort(),
    ).toEqual([...PRODUCT_IDS].sort());
    expect(curls()).toHaveLength(15);
  });

  it.each(curls().map((c) => [c.product, c] as const))(
    '%s: the command answers',
    async (product, curl) => {
      expect(curl.headers.authorization).toBe('Bearer $K');
      const url = new URL(/^https?:\/\//.test(curl.url) ? curl.url : `http://${curl.url}`);
      expect(`${url.hostname}:${url.port}`).toBe('127.0.0.1:8080'); // where npm start listens
      url.port = String(port);
      const response = await fetch(url, { method: curl.method, headers: { ...curl.headers, authorization: `Bearer ${keys.get(product)}` }, body: curl.body });
      const answer = (await response.json()) as { success: boolean; error_code?: string };
      if ((product === 'tls' || product === 'whois') && response.status === 502) expect(answer.error_code).toBe('lookup_failed');
      else
        expect({ status: response.status, success: answer.success, error_code: answer.error_code }).toEqual({
          status: 200,
          success: true,
          error_code: undefined,
        });
    },
    30_000,
  );
});
