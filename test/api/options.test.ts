/**
 * createApi's options as a JavaScript caller gets them wrong, and its observers (`onResponse`,
 * `onError`) when they throw: mistakes are invalid_option TypeErrors at construction, and an
 * observer's throw changes no answer and no bill.
 */
import { describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/create-api.js';
import type { ApiOptions } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { thrown } from '../thrown.js';
import { call } from './harness.js';

const lookup = createLookup();
const meter = createMemoryMeter();
const valid = { lookup, meter };
/** createApi with options a JavaScript caller might pass (the types would refuse them). */
const createLoosely = (options: unknown) => createApi(options as ApiOptions);

describe('createApi options', () => {
  it.each([
    ['no options at all', undefined, /createApi needs an options object/],
    ['null', null, /createApi needs an options object/],
    ['a misspelt option', { ...valid, bodylimit: 1024 }, /createApi has no option "bodylimit"; it takes lookup, meter, .*bodyLimit/],
    ['no meter', { lookup }, /createApi needs \{ lookup, meter \}/],
    ['a lookup that is not one', { ...valid, lookup: 'x' }, /lookup must be what createLookup\(\) returns/],
    ['a meter that is not one', { ...valid, meter: {} }, /meter must be a Meter .*: it has no resolveKey\(\)/],
    ['an onResponse that is not a function', { ...valid, onResponse: 'x' }, /onResponse must be a function \(got string\)/],
    ['an onError that is not a function', { ...valid, onError: 'x' }, /onError must be a function/],
    ['a clock that is not a function', { ...valid, now: 5 }, /now must be a function/],
    ['a logger without error()', { ...valid, logger: { info() {} } }, /logger must have info\(\) and error\(\)/],
    ['a trustProxy that is one string', { ...valid, trustProxy: '10.0.0.0/8' }, /trustProxy must be an array of CIDR strings/],
    ['a secret that is a number', { ...valid, secret: 5 }, /secret must be text or bytes/],
    ['a single-use store without consume()', { ...valid, singleUse: {} }, /singleUse must be a SingleUseStore/],
  ])('refuses %s with an invalid_option TypeError', (_name, options, message) => {
    const error = thrown(() => createLoosely(options));
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ code: 'invalid_option', message: expect.stringMatching(message) });
  });

  it('takes every documented option', () => {
    const api = createApi({
      ...valid,
      singleUse: { consume: () => true, close: async () => {} },
      secret: 'a-test-operator-secret-of-at-least-32-bytes',
      bodyLimit: 1024,
      batchLimit: 10,
      batchDeadlineMs: 1000,
      trustProxy: ['10.0.0.0/8'],
      onMeterError: 'allow',
      meterTimeoutMs: 500,
      onResponse: () => {},
      onError: () => {},
      logger: { info() {}, error() {} },
      now: Date.now,
    });
    expect(typeof api.handle).toBe('function');
  });
});

describe('createApi observers that throw', () => {
  it('an onResponse that throws changes no answer and no bill; onError hears it with the request id', async () => {
    const errors: { error: unknown; context: string }[] = [];
    const api = createApi({
      ...valid,
      onResponse: () => {
        throw new Error('log sink down');
      },
      onError: (error, context) => errors.push({ error, context }),
    });
    const keys = await issueKeys(meter, { product: 'useragent', plan: 'enterprise' });
    const before = await meter.quota(keys.subscriptionId, 1_000_000, Date.now());
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await call(api, '/v1/useragent/lookup?ua=curl/8.5.0', { key: keys.secretKey }));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
    expect(replies[0].body).toMatchObject({ success: true, user_agent: 'curl/8.5.0' });
    expect(await meter.quota(keys.subscriptionId, 1_000_000, Date.now())).toEqual({ ...before, remaining: (before.remaining as number) - 3 });
    expect(errors.map(({ error, context }) => [(error as Error).message, context])).toEqual(
      replies.map((reply) => ['log sink down', reply.headers['x-request-id']]),
    );
  });

  it('an onError that throws too is dropped: the answer still goes out', async () => {
    const api = createApi({
      ...valid,
      onResponse: () => {
        throw new Error('log sink down');
      },
      onError: () => {
        throw new Error('and so is the error sink');
      },
    });
    expect((await call(api, '/healthz')).status).toBe(200);
    // The 500 path reports through onError as well.
    expect((await api.handle({ method: 'GET', url: '/v1/useragent/status', headers: { authorization: 'Bearer x' }, remoteAddress: '127.0.0.1' })).status).toBe(
      401,
    );
  });
});

describe('api.respond on a request an adapter got wrong', () => {
  it.each([
    ['an empty object', {}],
    ['null', null],
    ['headers missing', { method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1' }],
    ['a url that is not text', { method: 'GET', url: 5, headers: {} }],
  ])('answers %s with a 500 in the envelope and tells onError, never throwing', (_name, request) => {
    const errors: string[] = [];
    const logged: unknown[] = [];
    const api = createApi({ ...valid, onError: (error) => errors.push((error as Error).message), onResponse: (event) => logged.push(event) });
    const response = api.respond!(request as never);
    expect(response).toMatchObject({ status: 500 });
    expect(JSON.parse((response as { body: string }).body)).toMatchObject({ success: false, error_code: 'internal_error' });
    expect(errors).toEqual([expect.stringMatching(/^api\.respond needs \{ method, url, headers, remoteAddress \}/)]);
    expect(logged).toEqual([expect.objectContaining({ route: 'unmatched', status: 500, error_code: 'internal_error' })]);
  });
});
