/**
 * `ApiRequest.signal`: a lookup holding quota whose client has gone is abandoned and refunded at
 * once, single lookups and batches alike; a lookup answered to a client still there is billed
 * and its lease committed (it stays billed past the lease time).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRequest } from '../../src/api/types.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { createApiStack, FROZEN_NOW, type ApiStack } from './harness.js';

let dns: DnsTestServer;
let lookup: Lookup;

beforeAll(async () => {
  // Answers after 1.5 s, within the resolver's 2 s: a lookup left to run would succeed and be billed.
  dns = await startDnsServer({ behaviour: 'slow', delayMs: 1_500 });
  lookup = createLookup({ dns: { servers: [dns.address] } });
});
afterAll(async () => {
  await lookup.close();
  await dns.close();
});

/** Send `request` with a signal, abort it once the slow DNS server got a query, and return the answer. */
async function abortMidLookup(stack: ApiStack, request: Omit<ApiRequest, 'signal'>) {
  const controller = new AbortController();
  const queriesBefore = dns.total();
  const answer = stack.api.handle({ ...request, signal: controller.signal });
  while (dns.total() === queriesBefore) await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort();
  return answer;
}

async function quotaRemaining(stack: ApiStack, key: string): Promise<unknown> {
  return (await stack.call('/v1/emailauth/status', { key })).body.quota_remaining;
}

describe('a client gone mid-lookup is not billed', () => {
  it('a single lookup is abandoned and its unit given back as soon as the signal aborts', async () => {
    const stack = await createApiStack({ lookup });
    const key = (await stack.keys('emailauth')).secretKey;
    const response = await abortMidLookup(stack, {
      method: 'GET',
      url: '/v1/emailauth/lookup?domain=gone.example.com',
      headers: { authorization: `Bearer ${key}` },
      remoteAddress: '127.0.0.1',
    });
    // Logged as nginx logs it: the client's leaving, not an upstream failure (no 5xx).
    expect(response.status).toBe(499);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 'client_closed_request', error: expect.stringContaining('not billed') });
    expect(await quotaRemaining(stack, key)).toBe(10_000);
    expect(await stack.meter.usage()).toEqual([expect.objectContaining({ lookups: 0 })]);
  });

  it('a batch is answered at once, every unit given back, long before its deadline', async () => {
    const stack = await createApiStack({ lookup, batchDeadlineMs: 600_000 });
    const key = (await stack.keys('emailauth')).secretKey;
    const response = await abortMidLookup(stack, {
      method: 'POST',
      url: '/v1/emailauth/batch',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: ['a-gone.com', 'b-gone.org', 'not a domain!'] }),
      remoteAddress: '127.0.0.1',
    });
    expect(response.status).toBe(499);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 'client_closed_request', error: expect.stringContaining('not billed') });
    expect(await quotaRemaining(stack, key)).toBe(10_000);
  });
});

describe('an answer to a client still there is billed for good', () => {
  it('commits the lease: the unit stays used after the lease time', async () => {
    let now = FROZEN_NOW;
    const meter = createMemoryMeter({ leaseMs: 60_000, now: () => now });
    const stack = await createApiStack({ meter, now: () => now });
    const key = (await stack.keys('useragent')).secretKey;
    const controller = new AbortController();
    const response = await stack.api.handle({
      method: 'GET',
      url: '/v1/useragent/lookup?ua=curl%2F8.0',
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    now += 120_000;
    expect((await stack.call('/v1/useragent/status', { key })).body.quota_remaining).toBe(10_000 - 1);
    expect((await meter.usage()).map((row) => row.lookups)).toEqual([1]);
  });
});
