/**
 * The resolver's wait for an in-flight slot, against a slow DNS server on loopback: the wait counts
 * against the question's deadline (`attempts` × `totalMs`), at most 4 × maxInFlight questions
 * wait, and a burst whose deadlines ran out leaves nothing behind it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { failure } from './failure.js';
import { isSeclookupError } from '../../../src/errors.js';
import { createDnsResolver, type DnsResolverOptions } from '../../../src/lib/dns/index.js';
import { EMAIL_ZONE, startDnsServer, type DnsTestServer } from '../../servers/dns-server.js';

let server: DnsTestServer;
beforeAll(async () => {
  server = await startDnsServer({ zone: EMAIL_ZONE });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.resetCounts();
});

const MAX_IN_FLIGHT = 4;
const resolverFor = (options: DnsResolverOptions) => createDnsResolver({ servers: [server.address], maxInFlight: MAX_IN_FLIGHT, ...options });
/** Distinct names (no single-flight between them), absent from the zone: NXDOMAIN once the delay is over. */
const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}.example.test`);

describe('waiting for an in-flight slot', () => {
  it('refuses a question at once, with timeout, when 4 x maxInFlight already wait (saturated)', async () => {
    server.setBehaviour('slow', 150);
    const dns = resolverFor({ attempts: 1, timeouts: { totalMs: 5_000 } });
    let finished = 0;
    const admitted = names('bound', 5 * MAX_IN_FLIGHT).map((name) => dns.resolve(name, 'A').finally(() => finished++));

    const refused = await failure(dns.resolve('excess.example.test', 'A'));
    expect(refused.code).toBe('timeout');
    expect(refused.message).toMatch(/saturated/);
    expect(finished).toBe(0); // refused before any admitted question was answered: it did not wait its turn

    const answers = await Promise.all(admitted);
    expect(answers.every((answer) => answer.status === 'nxdomain')).toBe(true);
    expect(server.total()).toBe(5 * MAX_IN_FLIGHT);
    expect(server.queries.get('excess.example.test A')).toBeUndefined();
  });

  it('fails a question queued behind slow ones with timeout when its deadline passes, instead of waiting for the queue', async () => {
    server.setBehaviour('slow', 250);
    // Budget 900 ms a question: rounds of 4 are answered at 250, 500 and 750 ms, the fourth starts
    // with 150 ms left and times out, the fifth never gets a slot (it would be answered at 1.25 s).
    const dns = resolverFor({ attempts: 1, timeouts: { totalMs: 900 } });
    const questions = names('queued', 5 * MAX_IN_FLIGHT).map((name) => dns.resolve(name, 'A'));
    const allSettled = Promise.allSettled(questions); // handles every rejection from the start
    const last = questions.at(-1)!;

    const started = performance.now();
    const error = await failure(last);
    expect(error.code).toBe('timeout');
    // Given up when its own 900 ms ran out, not answered after the queue ahead of it. The time
    // bound is loose (only a hang would fail it); the count says the fifth round was never asked.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(server.total()).toBeLessThan(5 * MAX_IN_FLIGHT);

    const settled = await allSettled;
    expect(settled.slice(0, MAX_IN_FLIGHT).map((s) => s.status)).toEqual(Array(MAX_IN_FLIGHT).fill('fulfilled'));
    expect(dns.queriesInFlight).toBe(0);
  });

  it('after a burst whose deadlines ran out, answers a fresh question with one query and leaves nothing stale running', async () => {
    server.setBehaviour('slow', 250);
    const dns = resolverFor({ attempts: 1, timeouts: { totalMs: 600 } });
    // A full queue of questions whose askers will not wait for them (a flood of aborted requests).
    const burst = names('burst', 5 * MAX_IN_FLIGHT).map((name) => dns.resolve(name, 'A'));
    const allSettled = Promise.allSettled(burst); // handles every rejection from the start
    const firstFailure = Promise.race(
      burst.map((question) =>
        question.then(
          () => new Promise<void>(() => {}),
          () => undefined,
        ),
      ),
    );
    await Promise.race([firstFailure, allSettled]);
    const sentByBurst = server.total();
    expect(sentByBurst).toBeLessThan(5 * MAX_IN_FLIGHT); // the burst's deadline ran out before all of it was asked

    const fresh = await dns.resolve('fresh.example.test', 'A');
    expect(fresh).toMatchObject({ status: 'nxdomain', cached: false });
    expect(server.queries.get('fresh.example.test A')).toBe(1);

    const settled = await allSettled;
    const timedOut = settled.filter((s) => s.status === 'rejected' && isSeclookupError(s.reason, 'timeout'));
    expect(timedOut.length).toBeGreaterThanOrEqual(2 * MAX_IN_FLIGHT);
    expect(settled.filter((s) => s.status === 'rejected')).toHaveLength(timedOut.length);
    // The burst was never asked in full: what waited past its deadline left the queue unasked.
    expect(server.total() - 1).toBeLessThan(5 * MAX_IN_FLIGHT);
    expect(dns.queriesInFlight).toBe(0);
  });

  it('counts the slot wait in the deadline but still answers a queued question that gets its turn in time', async () => {
    server.setBehaviour('slow', 100);
    const dns = resolverFor({ timeouts: { totalMs: 2_000 } });
    const answers = await Promise.all(names('turn', 3 * MAX_IN_FLIGHT).map((name) => dns.resolve(name, 'A')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(3 * MAX_IN_FLIGHT).fill('nxdomain'));
    expect(server.total()).toBe(3 * MAX_IN_FLIGHT);
  });
});
