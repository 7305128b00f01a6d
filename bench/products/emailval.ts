/**
 * emailval engine, in process, over the bundled lists:
 *
 * - cached: 4,096 distinct well-formed addresses (mixed case, role and disposable ones, IDN
 *   domains), all in the result cache, looked up again as callers send them (whitespace,
 *   upper-case domains): normalization, a cache hit and a copy of the result per call.
 * - format-invalid: malformed addresses of every kind (no `@`, quoted, literals, bad dots,
 *   bad domains, over-long): normalization and the result, no DNS and no cache.
 *
 * The warm-up resolver answers from memory (an MX record for every domain, TTL one hour): the
 * cached case never reaches DNS once warm, and the bench must not depend on a network.
 */
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createMemoryCache, createProductCache } from '../../src/lib/cache.js';
import type { DnsAnswer, DnsRecordType, DnsResolver } from '../../src/lib/dns/index.js';
import { isPromise, type LookupOutcome, type MaybePromise } from '../../src/lib/outcome.js';
import { createEmailValEngine, loadEmailLists, type CachedEmailResult } from '../../src/products/emailval/engine.js';
import type { EmailValResult } from '../../src/products/emailval/types.js';
import { absoluteRow, measure, seededRandom, type BenchRow } from '../harness.js';

const SUITE = 'emailval engine';
const MIX_SIZE = 4096; // a power of two: the index is a mask

/** Answers every MX question with one host, from memory. */
function inMemoryResolver(): DnsResolver {
  return {
    servers: ['in-memory'],
    queriesSent: 0,
    queriesInFlight: 0,
    async resolve<T extends DnsRecordType>(name: string): Promise<DnsAnswer<T>> {
      return { status: 'ok', records: [{ priority: 10, exchange: `mx.${name}` }] as DnsAnswer<T>['records'], ttl: 3_600, cached: false, fetchedAt: Date.now() };
    },
  };
}

function syncOutcome(outcome: MaybePromise<LookupOutcome<EmailValResult>>): LookupOutcome<EmailValResult> {
  if (isPromise(outcome)) throw new Error('the emailval engine went to DNS on a warm cache');
  return outcome;
}

/** Addresses as callers send them: varied local parts, some role-like, some disposable or IDN domains, case and spaces. */
function wellFormedMix(rand: () => number): string[] {
  const locals = ['jane.doe', 'John.Smith', 'admin', 'info', 'noreply+alerts', 'marie-claire', "o'brien", 'user_42', 'Jürgen', 'support'];
  const domains = [
    'example.com',
    'Example.ORG',
    'mail.example.net',
    'mailinator.com',
    'inbox.yopmail.com',
    'Bücher.example',
    'corp.example.co.uk',
    'guerrillamail.com',
  ];
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)];
  return Array.from({ length: MIX_SIZE }, (_, i) => `${rand() < 0.2 ? ' ' : ''}${pick(locals)}${i}@${pick(domains)}${rand() < 0.2 ? ' ' : ''}`);
}

const MALFORMED = [
  'jane.example.com',
  '"jane doe"@example.com',
  'jane@[192.0.2.1]',
  'jane(work)@example.com',
  '.jane@example.com',
  'ja..ne@example.com',
  'jane doe@example.com',
  'jane@exa_mple.com',
  'jane@localhost',
  'jane@example..com',
  'jane@192.0.2.1',
  '@example.com',
  'jane@',
  `${'a'.repeat(65)}@example.com`,
  `${'x'.repeat(300)}@example.com`,
  'jane@example.com\r\n',
];

export async function run(): Promise<BenchRow[]> {
  const rand = seededRandom(20261123);
  const engine = createEmailValEngine({
    lists: loadEmailLists(bundledDataDir()),
    dns: inMemoryResolver,
    cache: createProductCache<CachedEmailResult>(createMemoryCache({ maxEntries: 10_000 })),
  });
  const addresses = wellFormedMix(rand);
  for (const address of addresses) await engine.lookup(engine.prepare(address)); // warm: every address cached
  const options = { durationMs: 1000, batch: 256, warmupBatches: 20 };

  let misses = 0;
  const cached = Math.max(
    ...[0, 1, 2].map(() =>
      measure((i) => {
        const outcome = syncOutcome(engine.lookup(engine.prepare(addresses[i & (MIX_SIZE - 1)])));
        if (!outcome.cached) misses++;
        return outcome;
      }, options),
    ),
  );
  if (misses > 0) throw new Error(`cached bench missed the cache ${misses} times`);

  const invalid = Math.max(...[0, 1, 2].map(() => measure((i) => syncOutcome(engine.lookup(engine.prepare(MALFORMED[i % MALFORMED.length]))), options)));

  return [
    absoluteRow(
      {
        suite: SUITE,
        case: `cached lookups: ${MIX_SIZE.toLocaleString('en-US')} distinct well-formed addresses, all cached (normalize + cache hit + copy)`,
        opsPerSec: cached,
        target: '>= 200,000/s',
      },
      200_000,
    ),
    absoluteRow(
      {
        suite: SUITE,
        case: `format-invalid lookups: ${MALFORMED.length} kinds of malformed address (no DNS, never cached)`,
        opsPerSec: invalid,
        target: '>= 400,000/s',
      },
      400_000,
    ),
  ];
}
