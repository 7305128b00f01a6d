/**
 * A batch in flight when `seclookup serve` gets SIGTERM: its inputs stuck on a DNS server that
 * never answers end at the resolver's deadline (or the batch's, 8 s, both under the 10 s shutdown
 * grace), the answer goes out with `Connection: close`, their quota units are given back before
 * the database closes, and serve exits 0.
 */
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { startDnsServer } from '../servers/dns-server.js';
import { createTempDirs, runCliJson } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

it('on SIGTERM answers the batch in flight when its lookups time out, refunds what it did not look up, and exits 0', async () => {
  const dns = await startDnsServer({ behaviour: 'silent' });
  const db = join(temp.make(), 'serve.db');
  try {
    const { serve, baseUrl } = await startServe(db, { args: ['--dns', dns.address] });
    const key = serve.starterKeys().get('emailauth')!.secret;
    const started = Date.now();
    const answer = fetch(`${baseUrl}/v1/emailauth/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: ['stuck-one.com', 'not a domain!', 'stuck-two.org'] }),
    });
    await serve.waitFor(() => dns.total() > 0);
    serve.kill('SIGTERM');
    const response = await answer;
    const body = (await response.json()) as { results: { error_code?: string; error?: string }[] };
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    expect(body.results.map((item) => item.error_code)).toEqual(['lookup_failed', 'invalid_domain', 'lookup_failed']);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    running.delete(serve);

    // Nothing was billed: the two valid inputs' units came back before the database closed.
    const keys = await runCliJson<{ subscription_id: string; prefix: string }[]>(['keys', 'list', '--json', '--db', db]);
    const subscription = keys.find((k) => key.startsWith(k.prefix))!.subscription_id;
    const meter = createSqliteMeter(db);
    try {
      expect((await meter.usage()).filter((row) => row.subscriptionId === subscription && row.lookups > 0)).toEqual([]);
      expect((await meter.quota(subscription, 10_000, Date.now())).remaining).toBe(10_000);
    } finally {
      await meter.close();
    }
  } finally {
    await dns.close();
  }
}, 20_000);
