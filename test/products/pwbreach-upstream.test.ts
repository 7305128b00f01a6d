/**
 * pwbreach against an upstream range API: real HTTP servers on loopback, honest and hostile
 * (silent, slow, garbage, failing then recovering), and the server's own request log showing
 * that only the 5-hex-digit prefix ever left the process.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import type { UpstreamOptions } from '../../src/products/pwbreach/upstream.js';
import { checkUpstreamUrl } from '../../src/products/pwbreach/upstream.js';
import { respond, startHttpFixture, type FixtureHandler, type HttpFixture } from '../servers/http-fixture.js';

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();
const PASSWORD = 'correct horse battery staple';
const HASH = sha1(PASSWORD);
const PREFIX = HASH.slice(0, 5);
const SUFFIX = HASH.slice(5);
/** Another hash under the same prefix (same first 5 digits, different suffix). */
const NEIGHBOUR = `${PREFIX}${'0'.repeat(34)}1`;

/** A padded answer as the public API sends it: the real lines among count-0 fakes, CRLF. */
function rangeAnswer(lines: string[], padding = 10): string {
  const fakes = Array.from({ length: padding }, (_, i) => `${sha1(`pad ${i}`).slice(5)}:0`);
  return [...lines, ...fakes].sort().join('\r\n');
}
const ANSWER = rangeAnswer([`${SUFFIX}:42`, `${NEIGHBOUR.slice(5)}:7`, `${sha1('other').slice(5)}:3`]);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: HttpFixture;
const log: Seen[] = [];

/** Record every request (method, URL, headers, body), then answer as `handler` does. */
function logged(handler: FixtureHandler): FixtureHandler {
  return (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      log.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res);
    });
  };
}

/** A route per scenario, each under its own path so counts stay apart. */
let failOnce = 0;
let emptyOnce = 0;
/** When each request to /throttled-once/ arrived. */
const throttledAt: number[] = [];
const ROUTES: Record<string, FixtureHandler> = {
  [`/ok/range/${PREFIX}`]: respond.text(ANSWER),
  [`/padded-only/range/${PREFIX}`]: respond.text(rangeAnswer([`${SUFFIX}:0`, `${NEIGHBOUR.slice(5)}:7`])),
  [`/silent/range/${PREFIX}`]: respond.hang(),
  [`/stall/range/${PREFIX}`]: respond.stallBody(`${SUFFIX}:4`),
  [`/garbage/range/${PREFIX}`]: respond.text('<html><body>Please enable cookies</body></html>', { contentType: 'text/html' }),
  [`/half-garbage/range/${PREFIX}`]: respond.text(`${SUFFIX}:42\r\n${NEIGHBOUR.slice(5)}:seven`),
  [`/slow/range/${PREFIX}`]: respond.slow(400, respond.text(ANSWER)),
  [`/a-bit-slow/range/${PREFIX}`]: respond.slow(30, respond.text(ANSWER)),
  [`/flaky/range/${PREFIX}`]: (req, res) => (failOnce++ === 0 ? respond.status(500)(req, res) : respond.text(ANSWER)(req, res)),
  [`/gone/range/${PREFIX}`]: respond.status(404),
  [`/huge/range/${PREFIX}`]: respond.text(rangeAnswer([`${SUFFIX}:42`], 40_000)),
  [`/chunked/range/${PREFIX}`]: respond.chunked(ANSWER, 100),
  // Found by a reviewer: an empty 200 (a proxy or a captive portal in the way) was cached for a day as "not breached".
  [`/empty-once/range/${PREFIX}`]: (req, res) => (emptyOnce++ === 0 ? respond.text('')(req, res) : respond.text(ANSWER)(req, res)),
  [`/empty/range/${PREFIX}`]: respond.text('\r\n', { contentType: 'text/html' }),
  [`/throttled-once/range/${PREFIX}`]: (req, res) => {
    throttledAt.push(Date.now());
    if (throttledAt.length > 1) return respond.text(ANSWER)(req, res);
    res.writeHead(429, { 'retry-after': '1', 'content-length': 0 });
    res.end();
  },
  [`/throttled-long/range/${PREFIX}`]: (_req, res) => {
    res.writeHead(429, { 'retry-after': '3600', 'content-length': 0 });
    res.end();
  },
};

beforeAll(async () => {
  server = await startHttpFixture(Object.fromEntries(Object.entries(ROUTES).map(([path, handler]) => [path, logged(handler)])));
});
afterAll(async () => {
  await server.close();
  // The server saw the prefix and nothing else: no hash, suffix or password in any URL,
  // header or body of any request made by the whole file.
  expect(log.length).toBeGreaterThan(10);
  for (const request of log) {
    expect(request.method).toBe('GET');
    expect(request.url).toMatch(new RegExp(`^/[a-z-]+/range/${PREFIX}$`));
    const everything = `${request.url}\n${JSON.stringify(request.headers)}\n${request.body}`.toUpperCase();
    for (const secret of [HASH, SUFFIX, NEIGHBOUR.slice(5), SUFFIX.slice(0, 10), PASSWORD.toUpperCase()]) expect(everything).not.toContain(secret);
  }
});

function engineFor(scenario: string, options: Partial<UpstreamOptions> = {}) {
  return createLookup({ pwbreach: { upstream: { url: `${server.url}/${scenario}/range/{prefix}`, backoffMs: 1, ...options } } });
}
const hits = (scenario: string) => server.hits.get(`/${scenario}/range/${PREFIX}`) ?? 0;
const requestsTo = (scenario: string) => log.filter((r) => r.url.startsWith(`/${scenario}/`));

describe('pwbreach upstream: an honest range API', () => {
  it('looks a password up by its prefix alone, asking for padding, and finds its count', async () => {
    const lookup = engineFor('ok');
    expect(await lookup.detailed.pwbreach(PASSWORD)).toMatchObject({ result: { breached: true, count: 42 }, cached: false });
    const [request] = requestsTo('ok');
    expect(request.url).toBe(`/ok/range/${PREFIX}`);
    expect(request.headers['add-padding']).toBe('true');
    expect(request.headers['user-agent']).toBe('seclookup-pwbreach');
  });

  it('caches the range: other hashes under the same prefix need no request', async () => {
    const lookup = engineFor('ok', { attempts: 1 });
    const before = hits('ok');
    await lookup.pwbreach(PASSWORD);
    expect(await lookup.detailed.pwbreach({ sha1: NEIGHBOUR.toLowerCase() })).toMatchObject({ result: { breached: true, count: 7 }, cached: true });
    expect(await lookup.detailed.pwbreach({ sha1: `${PREFIX}${'F'.repeat(35)}` })).toMatchObject({ result: { breached: false, count: 0 }, cached: true });
    expect(hits('ok')).toBe(before + 1);
  });

  it('sends one request for many concurrent lookups of one prefix', async () => {
    const lookup = engineFor('a-bit-slow');
    const results = await Promise.all(Array.from({ length: 20 }, () => lookup.pwbreach(PASSWORD)));
    expect(new Set(results.map((r) => r.count))).toEqual(new Set([42]));
    expect(hits('a-bit-slow')).toBe(1);
  });

  it('ignores padding: a hash present only with count 0 is not breached', async () => {
    expect(await engineFor('padded-only').pwbreach(PASSWORD)).toEqual({ breached: false, count: 0 });
  });

  it('reads a chunked answer', async () => {
    expect(await engineFor('chunked').pwbreach(PASSWORD)).toEqual({ breached: true, count: 42 });
  });

  it('serves the range route from the upstream, padding removed', async () => {
    const range = await engineFor('ok').engine('pwbreach').range(PREFIX.toLowerCase());
    expect(range.lines()).toEqual([`${SUFFIX}:42`, `${NEIGHBOUR.slice(5)}:7`, `${sha1('other').slice(5)}:3`].sort());
  });

  it('retries a 500 and answers from the second attempt', async () => {
    expect(await engineFor('flaky', { attempts: 3 }).pwbreach(PASSWORD)).toEqual({ breached: true, count: 42 });
    expect(hits('flaky')).toBe(2);
  });

  it('waits as long as a 429 says (Retry-After) before trying again', async () => {
    expect(await engineFor('throttled-once', { attempts: 3 }).pwbreach(PASSWORD)).toEqual({ breached: true, count: 42 });
    expect(throttledAt).toHaveLength(2);
    expect(throttledAt[1] - throttledAt[0]).toBeGreaterThanOrEqual(1_000);
  });

  it('waits for a slow answer inside its deadline', async () => {
    expect(await engineFor('a-bit-slow', { timeouts: { totalMs: 5_000 } }).pwbreach(PASSWORD)).toEqual({ breached: true, count: 42 });
  });
});

describe('pwbreach upstream: hostile or broken range APIs answer lookup_failed', () => {
  const failure = { code: 'lookup_failed', status: 502 };

  it('a server that never answers: cut at the deadline, retried, then failed', async () => {
    await expect(engineFor('silent', { timeouts: { totalMs: 150 }, attempts: 2 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('silent')).toBe(2);
  });

  it('a server that stalls mid-answer', async () => {
    await expect(engineFor('stall', { timeouts: { totalMs: 150 }, attempts: 1 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
  });

  it('a server slower than the deadline', async () => {
    await expect(engineFor('slow', { timeouts: { totalMs: 100 }, attempts: 1 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
  });

  it('garbage: failed at once, not retried', async () => {
    const error = await engineFor('garbage', { attempts: 3 })
      .pwbreach(PASSWORD)
      .catch((e: Error) => e);
    expect(error).toMatchObject(failure);
    expect((error as Error & { cause?: Error }).cause).toMatchObject({ code: 'upstream_failed' });
    expect(hits('garbage')).toBe(1);
  });

  it('an answer with one malformed line is refused whole', async () => {
    await expect(engineFor('half-garbage').pwbreach(PASSWORD)).rejects.toMatchObject(failure);
  });

  it('an empty answer (no hash, not even padding): retried, never cached as "not breached"', async () => {
    const lookup = engineFor('empty-once', { attempts: 2 });
    expect(await lookup.detailed.pwbreach(PASSWORD)).toMatchObject({ result: { breached: true, count: 42 }, cached: false });
    expect(hits('empty-once')).toBe(2);
    const always = engineFor('empty', { attempts: 2 });
    const error = await always.pwbreach(PASSWORD).catch((e: Error) => e);
    expect(error).toMatchObject(failure);
    expect((error as Error & { cause?: Error }).cause?.message).toBe('the range answer is empty (no hash, no padding)');
    await expect(always.pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('empty')).toBe(4);
  });

  it('a 429 asking for longer than a retry may wait (Retry-After: 3600): failed after one request', async () => {
    await expect(engineFor('throttled-long', { attempts: 3 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('throttled-long')).toBe(1);
  });

  it('a 404: not retried', async () => {
    await expect(engineFor('gone', { attempts: 3 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('gone')).toBe(1);
  });

  it('an answer over the size cap: failed at once, not retried', async () => {
    await expect(engineFor('huge', { maxBytes: 64 * 1024, attempts: 3 }).pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('huge')).toBe(1);
  });

  it('a port nobody listens on', async () => {
    const port = await freePort();
    const lookup = createLookup({ pwbreach: { upstream: { url: `http://127.0.0.1:${port}/range/{prefix}`, attempts: 2, backoffMs: 1 } } });
    await expect(lookup.pwbreach(PASSWORD)).rejects.toMatchObject(failure);
  });

  it('caches no failure: the next lookup asks again', async () => {
    const lookup = engineFor('gone');
    const before = hits('gone');
    await expect(lookup.pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    await expect(lookup.pwbreach(PASSWORD)).rejects.toMatchObject(failure);
    expect(hits('gone')).toBe(before + 2);
  });
});

describe('pwbreach upstream: configuration', () => {
  it.each([
    ['not a URL', 'range/{prefix}'],
    ['another scheme', 'ftp://example.com/range/{prefix}'],
    ['no {prefix}', 'https://api.pwnedpasswords.com/range/'],
  ])('refuses an upstream that is %s (invalid_option, at construction)', (_name, url) => {
    expect(() => checkUpstreamUrl(url)).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => createLookup({ pwbreach: { upstream: url } }).engine('pwbreach')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('refuses attempts outside 1-10', () => {
    expect(() => engineFor('ok', { attempts: 0 }).engine('pwbreach')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => engineFor('ok', { attempts: 11 }).engine('pwbreach')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('reports where its ranges come from', () => {
    expect(engineFor('ok').engine('pwbreach')).toMatchObject({ source: 'upstream', records: 0, storePath: null });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
