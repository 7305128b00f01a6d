/**
 * `seclookup/client` against loopback HTTP servers that misbehave in the ways a network and the
 * proxies in front of a service do, never a mock of the client: which failures are retried (and
 * which would bill a batch twice if they were), Retry-After as HTTP reads it, waits and deadlines
 * longer than a timer holds, many calls under one signal, answers too large to read, a key no
 * header can carry, a logger that throws, a JSON answer cut short, a batch item of a code this
 * version does not know. No test waits long: the waits are made short by the options, and a
 * wait that must not end is cut by an abort.
 */
import { getEventListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient, type RetryEvent } from '../../src/client/index.js';
import { parseRetryAfter } from '../../src/client/retry.js';
import { LookupError } from '../../src/errors.js';
import { createLoopbackHttpServers } from '../servers/http-loopback.js';
import { closedPort } from '../servers/tls-server.js';

const loopback = createLoopbackHttpServers();
const listen = loopback.listen;
afterAll(() => loopback.close());

const envelope = (res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const GEO = { success: true, request_id: 'req_ok', cached: false, ip: '8.8.8.8' };
const BATCH = { success: true, request_id: 'req_batch', results: [{ success: true, cached: false, ip: '8.8.8.8' }] };
const proxyPage = (res: ServerResponse) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');

/** Warnings the process emits while `run` runs (and a turn after, as emitWarning reports them). */
async function warningsDuring<T>(run: () => Promise<T>): Promise<{ result: T; warnings: Error[] }> {
  const warnings: Error[] = [];
  const record = (warning: Error) => warnings.push(warning);
  process.on('warning', record);
  try {
    const result = await run();
    await new Promise((resolve) => setImmediate(resolve));
    return { result, warnings };
  } finally {
    process.off('warning', record);
  }
}

describe('retries that cannot bill twice', () => {
  /** A server whose first answer to each path is `first`, then a success. */
  async function failingOnce(first: (req: IncomingMessage, res: ServerResponse) => void) {
    const hits: string[] = [];
    const url = await listen((req, res) => {
      hits.push(req.url!.split('?')[0]);
      if (hits.filter((path) => path === req.url!.split('?')[0]).length === 1) return first(req, res);
      req.resume().on('end', () => envelope(res, 200, req.url!.includes('batch') ? BATCH : GEO));
    });
    const retries: RetryEvent[] = [];
    const client = createClient({ baseUrl: url, keys: { geoip: 'k' }, backoff: { baseMs: 1 }, onRetry: (event) => retries.push(event) });
    return { client, hits, retries };
  }

  it("retries a single lookup after a proxy's 502 or a reset connection, and a batch never", async () => {
    // The request reached the service (or may have): only a single lookup is retried, at the cost of one unit at most.
    const lost = {
      'a proxy 502 page': (_req: IncomingMessage, res: ServerResponse) => proxyPage(res),
      'a connection reset': (req: IncomingMessage) => req.socket.destroy(),
    };
    for (const [what, first] of Object.entries(lost)) {
      const { client, hits, retries } = await failingOnce(first);
      expect(await client.geoip('8.8.8.8'), what).toEqual({ ip: '8.8.8.8' });
      expect(
        retries.map((event) => event.reason),
        what,
      ).toEqual(['transient']);
      const error = (await client.batch.geoip(['8.8.8.8']).catch((caught: unknown) => caught)) as LookupError;
      expect(error, what).toBeInstanceOf(LookupError);
      expect([error.code, error.status, error.requestId], what).toEqual(['lookup_failed', 502, undefined]);
      expect(error.message, what).toMatch(/not retried: the service may have answered the batch, and billed it/);
      expect(hits, what).toEqual(['/v1/geoip/lookup', '/v1/geoip/lookup', '/v1/geoip/batch']);
      expect(retries, what).toHaveLength(1);
    }
  });

  it("retries a batch after the service's own error envelope, which is never billed", async () => {
    const { client, hits, retries } = await failingOnce((_req, res) =>
      envelope(res, 502, { success: false, error: 'upstream down', error_code: 'lookup_failed', request_id: 'req_1' }),
    );
    expect(await client.batch.geoip(['8.8.8.8'])).toEqual([{ success: true, result: { ip: '8.8.8.8' }, cached: false }]);
    expect(hits).toEqual(['/v1/geoip/batch', '/v1/geoip/batch']);
    expect(retries.map((event) => [event.reason, event.error.requestId])).toEqual([['transient', 'req_1']]);
  });

  it('retries a batch whose connection was never made: nothing was sent', async () => {
    const retries: RetryEvent[] = [];
    const down = createClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      keys: { geoip: 'k' },
      retries: 2,
      backoff: { baseMs: 1 },
      onRetry: (event) => retries.push(event),
    });
    const error = (await down.batch.geoip(['8.8.8.8']).catch((caught: unknown) => caught)) as LookupError;
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toMatch(/not retried/);
    expect(retries.map((event) => event.attempt)).toEqual([1, 2]);
  });

  it('a port fetch blocks (6000, 10080) is refused once: nothing was sent, so nothing is retried and a batch was not billed', async () => {
    for (const port of [6000, 10080]) {
      const retries: RetryEvent[] = [];
      const blocked = createClient({
        baseUrl: `http://127.0.0.1:${port}`,
        keys: { geoip: 'k' },
        backoff: { baseMs: 1 },
        onRetry: (event) => retries.push(event),
      });
      const single = (await blocked.geoip('8.8.8.8').catch((caught: unknown) => caught)) as LookupError;
      expect(retries.map((event) => event.error.message)).toEqual([]);
      const batch = (await blocked.batch.geoip(['8.8.8.8']).catch((caught: unknown) => caught)) as LookupError;
      expect(batch.message).not.toMatch(/not retried/);
      for (const error of [single, batch]) {
        expect(error).toBeInstanceOf(LookupError);
        expect([error.code, error.status, error.requestId]).toEqual(['lookup_failed', 502, undefined]);
        expect(error.message).toMatch(new RegExp(`fetch refuses port ${port}, one the Fetch standard blocks: .* \\(nothing was sent\\)$`));
      }
    }
  });

  it('refuses a batch answer whose results are not one per input, without retrying it (it was answered, so billed)', async () => {
    const answers = [[], [{ success: true, ip: '1.1.1.1' }], [1, 2, 3].map(() => ({ success: true, ip: '8.8.8.8' }))];
    const hits: number[] = [];
    const url = await listen((req, res) => {
      hits.push(hits.length);
      req.resume().on('end', () => envelope(res, 200, { success: true, request_id: `req_${hits.length}`, results: answers[hits.length - 1] }));
    });
    const retries: RetryEvent[] = [];
    const client = createClient({ baseUrl: url, keys: { geoip: 'k' }, backoff: { baseMs: 1 }, onRetry: (event) => retries.push(event) });
    for (const [i, results] of answers.entries()) {
      const error = (await client.batch.geoip(['8.8.8.8', '1.1.1.1']).catch((caught: unknown) => caught)) as LookupError;
      expect(error, `${results.length} results`).toBeInstanceOf(LookupError);
      expect([error.code, error.status, error.requestId, error.message]).toEqual([
        'lookup_failed',
        502,
        `req_${i + 1}`,
        `the batch answer has ${results.length} results for 2 inputs: they cannot be paired with the inputs`,
      ]);
    }
    expect([hits.length, retries]).toEqual([3, []]);
  });

  it('a JSON 200 cut short (framed by the connection close) is a lost answer: retried alone, thrown at once in a batch', async () => {
    const cut = (_req: IncomingMessage, res: ServerResponse) => {
      res.socket!.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"success":true,"request_id":"r","ip":"8.8');
    };
    const { client, hits, retries } = await failingOnce(cut);
    expect(await client.geoip('8.8.8.8')).toEqual({ ip: '8.8.8.8' });
    expect(retries.map(({ reason, error }) => [reason, error.code, error.status])).toEqual([['transient', 'lookup_failed', 502]]);
    expect(retries[0].error.message).toMatch(/HTTP 200, a JSON answer cut short or malformed .*: the answer was lost/);
    await expect(client.batch.geoip(['8.8.8.8'])).rejects.toMatchObject({ code: 'lookup_failed', status: 502, message: expect.stringMatching(/not retried/) });
    expect(hits).toEqual(['/v1/geoip/lookup', '/v1/geoip/lookup', '/v1/geoip/batch']);

    const once = await failingOnce(cut);
    await expect(once.client.with({ retries: 0 }).geoip('8.8.8.8')).rejects.toMatchObject({ name: 'LookupError', code: 'lookup_failed', status: 502 });
  });

  it('gives a batch item of an error code this version does not know a status: its own, else 502', async () => {
    const url = await listen((req, res) =>
      req.resume().on('end', () =>
        envelope(res, 200, {
          success: true,
          request_id: 'req_b',
          results: [
            { success: false, error: 'new', error_code: 'some_new_code' },
            { success: false, error: 'newer', error_code: 'another_code', status: 409, hint: 'x' },
            { success: false, error: 'bad', error_code: 'invalid_ip' },
          ],
        }),
      ),
    );
    const items = await createClient({ baseUrl: url, keys: { geoip: 'k' } }).batch.geoip(['a', 'b', 'c']);
    expect(items.map((item) => !item.success && [item.error.code, item.error.status, item.error.requestId, item.error.fields])).toEqual([
      ['some_new_code', 502, 'req_b', undefined],
      ['another_code', 409, 'req_b', { hint: 'x' }],
      ['invalid_ip', 400, 'req_b', undefined],
    ]);
  });
});

describe('Retry-After and long waits', () => {
  /** A server answering 429 rate_limit_exceeded with `retryAfter` (the header's values), then 200. */
  async function limitedOnce(retryAfter: string | string[]) {
    let hits = 0;
    const url = await listen((_req, res) => {
      hits++;
      if (hits > 1) return envelope(res, 200, GEO);
      res.setHeader('retry-after', retryAfter);
      envelope(res, 429, { success: false, error: 'slow down', error_code: 'rate_limit_exceeded', request_id: 'req_429' });
    });
    return { url, hits: () => hits };
  }

  it('reads delay-seconds and the three HTTP-date forms, and nothing else', async () => {
    const soon = new Date(Date.now() + 100_000);
    const [weekday, day, month, year, time] = soon.toUTCString().split(/,? /);
    const cases: [string | string[], number | undefined][] = [
      ['7', 7],
      [soon.toUTCString(), 100], // IMF-fixdate
      [`${new Intl.DateTimeFormat('en', { weekday: 'long', timeZone: 'UTC' }).format(soon)}, ${day}-${month}-${year.slice(2)} ${time} GMT`, 100], // rfc850
      [`${weekday} ${month} ${day.replace(/^0/, ' ')} ${time} ${year}`, 100], // asctime
      ['1.5', undefined],
      ['-5', undefined],
      ['0.9', undefined],
      [['5', '5'], undefined], // two headers, read as "5, 5"
      ['Sun, 31 Feb 2099 00:00:00 GMT', undefined],
      [soon.toUTCString().replace('GMT', '+0000'), undefined],
    ];
    for (const [value, seconds] of cases) {
      const { url } = await limitedOnce(value);
      const error = (await createClient({ baseUrl: url, keys: { geoip: 'k' }, retries: 0 })
        .geoip('8.8.8.8')
        .catch((caught: unknown) => caught)) as LookupError;
      expect(error.code, String(value)).toBe('rate_limit_exceeded');
      // A date is read to the second it names, 100 seconds from when the test began.
      if (seconds === 100) expect(error.retryAfter, String(value)).toSatisfy((after: number) => after > 90 && after <= 100);
      else expect(error.retryAfter, String(value)).toBe(seconds);
    }
  });

  it("reads rfc850's two-digit year as the one not more than 50 years ahead", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:01:40 GMT', now)).toBe(100_000);
    expect(parseRetryAfter('Tuesday, 01-Jan-76 00:00:00 GMT', now)).toBe(Date.UTC(2076, 0, 1) - now);
    expect(parseRetryAfter('Wednesday, 01-Jan-77 00:00:00 GMT', now)).toBe(0); // 1977: past
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(0);
    expect(parseRetryAfter('Sun Nov 6 08:49:37 1994', now)).toBeUndefined();
  });

  it("waits at least a 503's Retry-After (a proxy saying when the service is back), and not past the deadline", async () => {
    /** A proxy's 503 page with `retryAfter`, then the service's answer. */
    async function unavailableOnce(retryAfter: string) {
      let hits = 0;
      const url = await listen((_req, res) => {
        hits++;
        if (hits > 1) return envelope(res, 200, GEO);
        res.writeHead(503, { 'content-type': 'text/html', 'retry-after': retryAfter }).end('<h1>Service Unavailable</h1>');
      });
      return { url, hits: () => hits };
    }
    const long = await unavailableOnce('100');
    const error = await createClient({ baseUrl: long.url, keys: { geoip: 'k' } })
      .geoip('8.8.8.8')
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'LookupError', code: 'lookup_failed', status: 503, retryAfter: 100 });
    expect(long.hits()).toBe(1);

    const short = await unavailableOnce('2');
    const controller = new AbortController();
    const events: RetryEvent[] = [];
    const onRetry = (event: RetryEvent) => {
      events.push(event);
      controller.abort(new Error('seen the wait'));
    };
    const client = createClient({ baseUrl: short.url, keys: { geoip: 'k' }, signal: controller.signal, onRetry });
    expect(await client.geoip('8.8.8.8').catch((caught: unknown) => caught)).toEqual(new Error('seen the wait'));
    expect(events.map(({ reason, delayMs }) => [reason, delayMs])).toEqual([['transient', 2_000]]);
  });

  it('waits a Retry-After longer than a timer holds (2^31-1 ms) rather than retrying at once', async () => {
    const { url, hits } = await limitedOnce('3000000'); // 34.7 days
    const controller = new AbortController();
    const client = createClient({ baseUrl: url, keys: { geoip: 'k' }, retries: 1, timeoutMs: Infinity, signal: controller.signal });
    const { result, warnings } = await warningsDuring(async () => {
      const call = client.geoip('8.8.8.8').catch((caught: unknown) => caught);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const seen = hits();
      controller.abort(new Error('done waiting'));
      return { seen, settled: await call };
    });
    expect(result.seen).toBe(1);
    expect(result.settled).toEqual(new Error('done waiting'));
    expect(warnings.map((warning) => warning.name)).not.toContain('TimeoutOverflowWarning');
  });

  it('keeps a deadline longer than a timer holds: a wait past it fails at once', async () => {
    const { url, hits } = await limitedOnce('4000000'); // 46 days, past a 35-day deadline
    const client = createClient({ baseUrl: url, keys: { geoip: 'k' }, retries: 1, timeoutMs: 3_000_000_000 });
    const { result, warnings } = await warningsDuring(() => client.geoip('8.8.8.8').catch((caught: unknown) => caught));
    expect(result).toMatchObject({ name: 'LookupError', code: 'rate_limit_exceeded', retryAfter: 4_000_000 });
    expect(hits()).toBe(1);
    expect(warnings.map((warning) => warning.name)).not.toContain('TimeoutOverflowWarning');
  });
});

describe('one signal for many calls', () => {
  it('adds one abort listener to a client-wide signal however many calls are in flight, and aborts them all', async () => {
    const waiting: ServerResponse[] = [];
    const url = await listen((_req, res) => void waiting.push(res));
    const controller = new AbortController();
    const client = createClient({ baseUrl: url, keys: { asn: 'k' }, signal: controller.signal });
    const { result, warnings } = await warningsDuring(async () => {
      const calls = Array.from({ length: 20 }, (_, i) => client.asn(`1.1.1.${i}`));
      while (waiting.length < 20) await new Promise((resolve) => setTimeout(resolve, 5));
      const listeners = getEventListeners(controller.signal, 'abort').length;
      for (const res of waiting.splice(0)) envelope(res, 200, { success: true, request_id: 'r', cached: false, asn: 1 });
      await Promise.all(calls);
      return { listeners, after: getEventListeners(controller.signal, 'abort').length };
    });
    expect(result).toEqual({ listeners: 1, after: 0 });
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');

    // Its abort still reaches every call, with its reason.
    const calls = Array.from({ length: 20 }, (_, i) => client.asn(`1.1.1.${i}`).catch((caught: unknown) => caught));
    while (waiting.length < 20) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('stop'));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 20 }, () => new Error('stop')));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('answers too large to read', () => {
  it('stops reading an error page at 1 MiB, closing the connection, and does not retry it', async () => {
    let hits = 0;
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const url = await listen((_req, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'text/html' });
      // A page without end, until the client hangs up.
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
      };
      res.on('close', closed);
      pump();
    });
    const error = (await createClient({ baseUrl: url, keys: { geoip: 'k' }, backoff: { baseMs: 1 }, timeoutMs: 10_000 })
      .geoip('8.8.8.8')
      .catch((caught: unknown) => caught)) as LookupError;
    expect(error).toBeInstanceOf(LookupError);
    expect([error.code, error.status, hits]).toEqual(['lookup_failed', 502, 1]);
    expect(error.message).toMatch(/HTTP 502, an answer larger than 1 MiB, not read/);
    await gone;
  });

  it('refuses a success whose Content-Length is over 64 MiB without reading it', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024), 'x-request-id': 'req_big' });
      res.write('{"success":true,'); // and nothing more
    });
    const error = (await createClient({ baseUrl: url, keys: { geoip: 'k' }, timeoutMs: 5_000 })
      .batch.geoip(['8.8.8.8'])
      .catch((caught: unknown) => caught)) as LookupError;
    expect([error.code, error.status, error.requestId]).toEqual(['lookup_failed', 502, 'req_big']);
    expect(error.message).toMatch(/HTTP 200, an answer larger than 64 MiB, not read/);
  });
});

describe('what the caller gave', () => {
  it('refuses a key no header can carry at once, as the service would, without showing it', async () => {
    let hits = 0;
    const url = await listen((_req, res) => (hits++, envelope(res, 200, GEO)));
    for (const key of ['geo_sec_abc…', 'geo_sec_a\nb', 'geo_sec_a\u0000b']) {
      const retries: RetryEvent[] = [];
      const client = createClient({ baseUrl: url, keys: { geoip: key }, onRetry: (event) => retries.push(event) });
      const error = (await client.geoip('8.8.8.8').catch((caught: unknown) => caught)) as LookupError;
      expect(error, JSON.stringify(key)).toBeInstanceOf(LookupError);
      expect([error.code, error.status, error.requestId], JSON.stringify(key)).toEqual(['invalid_api_key', 401, undefined]);
      expect(error.message).not.toContain('geo_sec_a');
      expect(String(error.cause ?? '')).not.toContain('geo_sec_a');
      expect(retries).toEqual([]);
    }
    expect(hits).toBe(0);
  });

  it("rejects with what the keys function throws or rejects with, unchanged, before any request: it is the caller's error", async () => {
    let hits = 0;
    const url = await listen((_req, res) => (hits++, envelope(res, 200, GEO)));
    const vaultDown = new Error('vault down');
    const retries: RetryEvent[] = [];
    const failing = {
      throwing: () => {
        throw vaultDown;
      },
      rejecting: async () => Promise.reject(vaultDown),
    };
    for (const [what, keys] of Object.entries(failing)) {
      const client = createClient({ baseUrl: url, keys, backoff: { baseMs: 1 }, onRetry: (event) => retries.push(event) });
      expect(await client.geoip('8.8.8.8').catch((caught: unknown) => caught), what).toBe(vaultDown);
      expect(await client.batch.geoip(['8.8.8.8']).catch((caught: unknown) => caught), what).toBe(vaultDown);
    }
    expect([hits, retries]).toEqual([0, []]);
  });

  it('refuses a baseUrl holding a user name or password, which would be dropped, without showing them', () => {
    for (const baseUrl of ['http://user:s3cret@127.0.0.1:8080', 'https://user@example.com/api', new URL('http://:s3cret@example.com')]) {
      const error = (() => {
        try {
          createClient({ baseUrl, keys: { geoip: 'k' } });
        } catch (caught) {
          return caught as Error & { code?: string };
        }
      })();
      expect([error?.name, error?.code], String(baseUrl)).toEqual(['TypeError', 'invalid_option']);
      expect(error?.message, String(baseUrl)).toMatch(/baseUrl must hold no user name or password/);
      expect(error?.message, String(baseUrl)).not.toMatch(/s3cret|user@/);
    }
  });

  it('ignores what onRetry throws or rejects with: the call goes on', async () => {
    let hits = 0;
    const url = await listen((_req, res) => (++hits % 2 === 1 ? proxyPage(res) : envelope(res, 200, GEO)));
    const throwing = createClient({
      baseUrl: url,
      keys: { geoip: 'k' },
      backoff: { baseMs: 1 },
      onRetry: () => {
        throw new TypeError('logger broke');
      },
    });
    expect(await throwing.geoip('8.8.8.8')).toEqual({ ip: '8.8.8.8' });
    const rejecting = createClient({
      baseUrl: url,
      keys: { geoip: 'k' },
      backoff: { baseMs: 1 },
      onRetry: async () => Promise.reject(new Error('async logger broke')),
    });
    expect(await rejecting.geoip('8.8.8.8')).toEqual({ ip: '8.8.8.8' });
    expect(hits).toBe(4);
  });
});

describe('keys with white space around them', () => {
  it("sends a key read with a line break or spaces around it without them: in the Bearer header and in siteverify's secret field alike", async () => {
    const seen: string[] = [];
    const url = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push(req.url!.includes('siteverify') ? JSON.parse(body).secret : req.headers.authorization);
        envelope(res, 200, req.url!.includes('siteverify') ? { success: true, request_id: 'r', hostname: 'a.test' } : GEO);
      });
    });
    const client = createClient({ baseUrl: url, keys: { geoip: ' geo_sec_abc\n', captcha: 'tf_sec_abc\r\n' } });
    await client.geoip('8.8.8.8');
    await client.captcha.siteverify('token');
    expect(seen).toEqual(['Bearer geo_sec_abc', 'tf_sec_abc']);
  });

  it('a key of white space only is no key: missing_credentials, with no request', async () => {
    let hits = 0;
    const url = await listen((_req, res) => (hits++, envelope(res, 200, GEO)));
    const error = (await createClient({ baseUrl: url, keys: { geoip: ' \n' } })
      .geoip('8.8.8.8')
      .catch((caught: unknown) => caught)) as LookupError;
    expect([error.code, error.status]).toEqual(['missing_credentials', 401]);
    expect(hits).toBe(0);
  });
});

describe('answers that are neither a result nor an error status', () => {
  it("fail with an error status (the envelope code's, else 502), never 200, 204 or 302, and are not retried", async () => {
    const answers: [string, (res: ServerResponse) => void, string, number][] = [
      ['a 200 HTML page (a web app at baseUrl)', (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'), 'lookup_failed', 502],
      ['a 200 JSON array', (res) => envelope(res, 200, []), 'lookup_failed', 502],
      ['a 204', (res) => res.writeHead(204).end(), 'lookup_failed', 502],
      ['a 302', (res) => res.writeHead(302, { location: 'http://elsewhere.test/' }).end(), 'lookup_failed', 502],
      [
        'an error envelope on a 200',
        (res) => envelope(res, 200, { success: false, error: 'bad ip', error_code: 'invalid_ip', request_id: 'r' }),
        'invalid_ip',
        400,
      ],
    ];
    for (const [what, answer, code, status] of answers) {
      let hits = 0;
      const url = await listen((req, res) => (hits++, req.resume().on('end', () => answer(res))));
      const error = (await createClient({ baseUrl: url, keys: { geoip: 'k' }, backoff: { baseMs: 1 } })
        .geoip('8.8.8.8')
        .catch((caught: unknown) => caught)) as LookupError;
      expect(error, what).toBeInstanceOf(LookupError);
      expect([error.code, error.status], what).toEqual([code, status]);
      expect(hits, what).toBe(1);
    }
  });

  it("a browser's redirect not followed (type opaqueredirect, status 0) is said to be a redirect, with status 502", async () => {
    // What a browser's fetch gives for redirect: 'manual' (Node's gives the 3xx itself).
    const opaque = { type: 'opaqueredirect', status: 0, ok: false, headers: new Headers(), body: null, url: '' } as unknown as Response;
    const browserFetch = (async () => opaque) as typeof fetch;
    const error = (await createClient({ baseUrl: 'http://127.0.0.1:9', keys: { geoip: 'k' }, fetch: browserFetch })
      .geoip('8.8.8.8')
      .catch((caught: unknown) => caught)) as LookupError;
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toMatch(/a redirect to another URL \(set baseUrl to where the service is\)/);
  });
});

describe('fetched_at', () => {
  it("gives fetchedAt for SPEC's shape or a zoned ISO date-time only, never a host's guess at other text", async () => {
    const cases: [string, string | undefined][] = [
      ['2024-03-01 12:34:56.789', '2024-03-01T12:34:56.789Z'],
      ['2024-03-01T12:34:56+02:00', '2024-03-01T10:34:56.000Z'],
      ['5', undefined],
      ['2024-03-01T12:34:56', undefined], // no zone: local time on the host, so some moment or other
      ['March 1', undefined],
    ];
    let fetchedAt = '';
    const url = await listen((_req, res) => envelope(res, 200, { ...GEO, fetched_at: fetchedAt }));
    const client = createClient({ baseUrl: url, keys: { geoip: 'k' } });
    for (const [sent, expected] of cases) {
      fetchedAt = sent;
      const outcome = await client.detailed.geoip('8.8.8.8');
      expect(outcome.fetchedAt?.toISOString(), sent).toBe(expected);
    }
  });
});
