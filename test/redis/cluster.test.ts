/**
 * Several API instances on one real Redis Cluster (three masters, a replica each, on loopback),
 * driven through `api.handle` as two `serve` processes would be: limits and quotas are exact
 * across instances for subscriptions whose counters live on different masters; a master killed
 * under load fails only its own slots' requests (500, or served unmetered with 'allow') until
 * its replica takes over, and the counts are exact afterwards; slots resharded under traffic
 * (`redis-cli --cluster reshard`) lose no count. The figures are printed for the docs.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiOptions } from '../../src/api/types.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { createRedisClient, createRedisMeter, createRedisSingleUseStore } from '../../src/metering/redis/index.js';
import type { Meter } from '../../src/metering/types.js';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { startRedisCluster, type RedisCluster } from '../servers/redis-cluster.js';

let cluster: RedisCluster;
let lookup: Lookup;
const closing: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  lookup = createLookup();
}, 30_000);
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  await cluster.flush();
});
afterEach(async () => {
  await Promise.all(closing.splice(0).map((store) => store.close()));
});

/**
 * One instance: its own meter and single-use store on the cluster, as a `serve` process has.
 * Generous timeouts: a thousand requests at once on a busy machine must not time out (a
 * timeout is a 500, whose count is uncertain); a dead master is refused at once anyway.
 */
async function instance(options: Partial<ApiOptions> = {}): Promise<ApiStack> {
  const meter: Meter = createRedisMeter(cluster.url(), { maxReconnectDelayMs: 100, commandTimeoutMs: 20_000 });
  const singleUse = createRedisSingleUseStore(cluster.url(), { maxReconnectDelayMs: 100, commandTimeoutMs: 20_000 });
  closing.push(meter, singleUse);
  return createApiStack({ meter, singleUse, lookup, meterTimeoutMs: 30_000, ...options });
}

const UA = encodeURIComponent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36');
const PATH = `/v1/useragent/lookup?ua=${UA}`;

interface Subscription {
  id: string;
  key: string;
  /** The port of the master holding its counters when it was made. */
  master: number;
}

/** `count` subscriptions on `plan`, with the master their counters live on. */
async function subscriptions(stack: ApiStack, plan: string, count: number): Promise<Subscription[]> {
  const made: Subscription[] = [];
  for (let i = 0; i < count; i++) {
    const keys = await stack.keys('useragent', { plan });
    made.push({ id: keys.subscriptionId, key: keys.secretKey, master: await cluster.masterOf(`seclookup:{sub:${keys.subscriptionId}}:quota`) });
  }
  return made;
}

function label(reply: Reply): string {
  return reply.status === 200 ? '200' : `${reply.status} ${String(reply.body.error_code)}`;
}

/** Answers per subscription id, counted by label. */
type Tally = Map<string, Record<string, number>>;
function tally(into: Tally, id: string, reply: Reply): void {
  const counts = into.get(id) ?? {};
  counts[label(reply)] = (counts[label(reply)] ?? 0) + 1;
  into.set(id, counts);
}

/** Units held by open leases per subscription (`<id>|<units>|...` members of `{sub:<id>}:leases`). */
async function heldLeaseUnits(ids: readonly string[]): Promise<Map<string, number>> {
  const client = createRedisClient(cluster.url());
  try {
    const held = new Map<string, number>();
    for (const id of ids) {
      const members = (await client.zrange(`seclookup:{sub:${id}}:leases`, 0, -1)) as string[];
      held.set(
        id,
        members.reduce((sum, member) => sum + Number(member.split('|')[1]), 0),
      );
    }
    return held;
  } finally {
    client.disconnect();
  }
}

/** Billed lookups per subscription, from the meter's usage rows. */
async function billed(meter: Meter): Promise<Map<string, number>> {
  const rows = await meter.usage();
  const out = new Map<string, number>();
  for (const row of rows) out.set(row.subscriptionId, (out.get(row.subscriptionId) ?? 0) + row.lookups);
  return out;
}

/**
 * Requests from `workers` concurrent loops, alternating instances, each taking the next
 * subscription not yet over its quota, until every one is (or the deadline). While `until` is
 * given and not settled, they go on over every subscription: a quota already spent must keep
 * answering 429. `onAnswer` sees each answer as it comes.
 */
async function untilQuotasAreSpent(
  stacks: ApiStack[],
  subs: Subscription[],
  workers: number,
  onAnswer: (sub: Subscription, reply: Reply) => void | Promise<void>,
  until?: () => Promise<unknown> | null,
): Promise<void> {
  const spent = new Set<string>();
  const deadline = Date.now() + 30_000;
  let settled = false;
  let next = 0;
  const busy = () => spent.size < subs.length || (until !== undefined && !settled);
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (busy() && Date.now() < deadline) {
        const waitFor = until?.();
        if (waitFor && !settled) waitFor.finally(() => (settled = true)).catch(() => undefined);
        const open = subs.filter((sub) => !spent.has(sub.id));
        const sub = (open.length > 0 ? open : subs)[next++ % (open.length || subs.length)];
        const reply = await stacks[(next + worker) % stacks.length].call(PATH, { key: sub.key });
        if (reply.status === 429 && reply.body.error_code === 'quota_exceeded') spent.add(sub.id);
        // A failed slot answers at once: give the cluster a moment instead of spinning.
        if (reply.status === 500) await new Promise((resolve) => setTimeout(resolve, 5));
        await onAnswer(sub, reply);
      }
    }),
  );
}

describe('two API instances on one Redis Cluster', () => {
  it('concurrent bursts over 12 subscriptions on all three masters: admitted = the limit, billed = the answers', async () => {
    const [a, b] = [await instance(), await instance()];
    await a.meter.setPlan({ slug: 'rate30', product: '*', rateLimitPerMinute: 30, monthlyQuota: 10_000 });
    await a.meter.setPlan({ slug: 'quota25', product: '*', rateLimitPerMinute: 10_000, monthlyQuota: 25 });
    const rated = await subscriptions(a, 'rate30', 12);
    const quoted = await subscriptions(b, 'quota25', 12);
    expect(new Set(rated.map((s) => s.master)).size).toBe(3);
    expect(new Set(quoted.map((s) => s.master)).size).toBe(3);

    // 50 requests per rate-limited subscription and 40 per quota one, all at once, alternating instances.
    const calls = [...rated.flatMap((sub) => Array.from({ length: 50 }, () => sub)), ...quoted.flatMap((sub) => Array.from({ length: 40 }, () => sub))];
    const answers: Tally = new Map();
    await Promise.all(calls.map(async (sub, i) => tally(answers, sub.id, await (i % 2 ? a : b).call(PATH, { key: sub.key }))));

    for (const sub of rated) expect(answers.get(sub.id), `subscription ${sub.id}`).toEqual({ '200': 30, '429 rate_limit_exceeded': 20 });
    for (const sub of quoted) expect(answers.get(sub.id), `subscription ${sub.id}`).toEqual({ '200': 25, '429 quota_exceeded': 15 });
    await a.meter.close(); // a's commits still pending (commitDelayMs); b's own usage() sends b's
    const bill = await billed(b.meter);
    for (const sub of [...rated, ...quoted]) expect(bill.get(sub.id), `billed ${sub.id}`).toBe(answers.get(sub.id)!['200']);
    console.log(
      `cluster exactness: ${calls.length} concurrent requests over 24 subscriptions on 3 masters, 2 instances: every subscription admitted = its limit, billed = answered`,
    );
  });

  it('a master killed under load: only its slots fail (500 with deny, served with allow) until its replica takes over; then the counts are exact', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = [await instance(), await instance()];
    const allow = await instance({ onMeterError: 'allow' });
    await a.meter.setPlan({ slug: 'quota40', product: '*', rateLimitPerMinute: 10_000, monthlyQuota: 40 });
    const subs = await subscriptions(a, 'quota40', 12);
    const adminMaster = await cluster.masterOf('seclookup:{admin}:keys');
    // The victim holds some subscriptions' counters but not the admin records (see docs/redis-cluster.md).
    const victim = subs.map((s) => s.master).find((port) => port !== adminMaster)!;
    const onVictim = subs.filter((s) => s.master === victim);
    const elsewhere = subs.filter((s) => s.master !== victim);
    expect(onVictim.length).toBeGreaterThan(0);
    expect(elsewhere.length).toBeGreaterThan(0);

    const answers: Tally = new Map();
    let answered = 0;
    let killed: Promise<void> | null = null;
    let killedAt = 0;
    let lastFailureAt = 0;
    const allowedDuringOutage: string[] = [];
    let askedAllow = false;
    await untilQuotasAreSpent([a, b], subs, 8, async (sub, reply) => {
      tally(answers, sub.id, reply);
      if (reply.status === 500) {
        lastFailureAt = performance.now();
        if (!askedAllow) {
          askedAllow = true;
          allowedDuringOutage.push(label(await allow.call(PATH, { key: sub.key })));
        }
      }
      // Kill the master once a third of the quotas is spent, while the other workers' requests are in flight.
      if (++answered === 160) {
        killedAt = performance.now();
        killed = cluster.kill(victim);
      }
    });
    await killed;
    await cluster.waitUntilOk();

    const failures = onVictim.reduce((n, s) => n + (answers.get(s.id)?.['500 internal_error'] ?? 0), 0);
    const outageMs = Math.round(lastFailureAt - killedAt);
    console.log(
      `cluster master kill: ${onVictim.length} of 12 subscriptions on the killed master answered ${failures} × 500 over ${outageMs} ms until failover; ` +
        `the other ${elsewhere.length}: 0 × 500; admitted per subscription after failover: ${subs.map((s) => answers.get(s.id)?.['200'] ?? 0).join(', ')} (quota 40)`,
    );
    // The other masters' subscriptions never noticed.
    for (const sub of elsewhere) expect(answers.get(sub.id), `subscription ${sub.id}`).toEqual({ '200': 40, '429 quota_exceeded': expect.any(Number) });
    // The victim's failed while it was down, and 'allow' served them unmetered.
    expect(failures).toBeGreaterThan(0);
    expect(allowedDuringOutage).toEqual(['200']);
    // After failover, on the killed master's subscriptions: never over the quota, and every unit
    // not admitted is held by a lease nobody will commit. That is a consume that ran on the master
    // as it died and whose answer was lost (a 500): its unit goes back, unbilled, when the lease
    // expires (docs/redis-cluster.md). Seen in about half the runs; admitted is then 39.
    await Promise.all([a.meter.close(), b.meter.close()]); // sends the commits still pending
    const held = await heldLeaseUnits(onVictim.map((sub) => sub.id));
    const bill = await billed((await instance()).meter); // a fresh connection, made after the failover
    for (const sub of onVictim) {
      const admitted = answers.get(sub.id)?.['200'] ?? 0;
      expect(admitted, `subscription ${sub.id}`).toBeLessThanOrEqual(40);
      expect(admitted + (held.get(sub.id) ?? 0), `subscription ${sub.id}: admitted + held`).toBeGreaterThanOrEqual(40);
      expect(bill.get(sub.id), `billed ${sub.id}`).toBeGreaterThanOrEqual(admitted);
      expect(bill.get(sub.id), `billed ${sub.id}`).toBeLessThanOrEqual(40);
    }
    // The other masters' subscriptions: exactly the quota, billed = answered.
    for (const sub of elsewhere) expect(bill.get(sub.id), `billed ${sub.id}`).toBe(40);

    // The old master comes back as a replica of the new one: nothing changes.
    await cluster.start(victim);
    await cluster.waitUntilOk();
    expect((await (await instance()).call(PATH, { key: onVictim[0].key })).body.error_code).toBe('quota_exceeded');
  });

  it('slots resharded under traffic (redis-cli --cluster reshard): no count lost, billed = answered', async () => {
    const [a, b] = [await instance(), await instance()];
    await a.meter.setPlan({ slug: 'quota150', product: '*', rateLimitPerMinute: 10_000, monthlyQuota: 150 });
    const nodes = await cluster.nodes();
    const [from, to] = nodes.filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0).sort((x, y) => x.slots[0][0] - y.slots[0][0]);
    // reshard moves the source's lowest slots: make subscriptions until 6 have counters in the first 1000 of them.
    const moving: Subscription[] = [];
    const staying: Subscription[] = [];
    const firstSlot = from.slots[0][0];
    while (moving.length < 6) {
      const [sub] = await subscriptions(a, 'quota150', 1);
      const slot = await cluster.slotOf(`seclookup:{sub:${sub.id}}:quota`);
      if (slot >= firstSlot && slot < firstSlot + 1_000) moving.push(sub);
      else if (staying.length < 3) staying.push(sub);
    }
    const subs = [...moving, ...staying];

    const answers: Tally = new Map();
    let answered = 0;
    let reshard: Promise<string> | null = null;
    let duringReshard = 0;
    await untilQuotasAreSpent(
      [a, b],
      subs,
      8,
      (sub, reply) => {
        tally(answers, sub.id, reply);
        if (reshard) duringReshard++;
        if (++answered === 100) {
          reshard = cluster.cli([
            '--cluster',
            'reshard',
            `127.0.0.1:${from.port}`,
            '--cluster-from',
            from.id,
            '--cluster-to',
            to.id,
            '--cluster-slots',
            '1000',
            '--cluster-yes',
            '--cluster-pipeline',
            '1',
          ]);
        }
      },
      // Traffic goes on until the reshard is over: every moved slot migrates under load.
      () => reshard,
    );
    await reshard;
    await cluster.waitUntilOk();

    // The slots did move (else this proved nothing), and every subscription got exactly its quota.
    for (const sub of moving) expect(await cluster.masterOf(`seclookup:{sub:${sub.id}}:quota`)).toBe(to.port);
    for (const sub of subs) expect(answers.get(sub.id), `subscription ${sub.id}`).toEqual({ '200': 150, '429 quota_exceeded': expect.any(Number) });
    await a.meter.close(); // a's commits still pending (commitDelayMs); b's own usage() sends b's
    const bill = await billed(b.meter);
    for (const sub of subs) expect(bill.get(sub.id), `billed ${sub.id}`).toBe(150);
    expect(duringReshard).toBeGreaterThan(answered / 2);
    console.log(
      `cluster reshard: 1000 slots moved while ${duringReshard} of ${answered} requests ran over ${subs.length} subscriptions (${moving.length} on moved slots): admitted 150 of 150 each, billed 150`,
    );
  }, 60_000);
});
