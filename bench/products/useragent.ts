/**
 * useragent engine vs the raw libraries it wraps (`new UAParser(ua).getResult()` + `isbot(ua)`),
 * on the same User-Agent sequence, interleaved with compare().
 *
 * - cold: the engine at its default cache size (10,000) over 50,000+ distinct UAs in a cycle,
 *   so every lookup misses, and a full cache evicts on every insert. The distinct UAs are the
 *   corpus with a build number varied (`Chrome/131.0.0.0` -> `Chrome/131.0.0.017`): real
 *   traffic looks like that, and the parse takes the same regex path as the original.
 * - repeated: a Zipf (s = 1) draw over the corpus, as real traffic repeats a few UAs a lot.
 */
import { readFileSync } from 'node:fs';
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';
import { isPromise, type MaybePromise } from '../../src/lib/outcome.js';
import { isBot } from '../../src/products/useragent/bots.js';
import { createUserAgentEngine } from '../../src/products/useragent/engine.js';
import { compare, ratioRow, type BenchRow, seededRandom } from '../harness.js';

const SUITE = 'useragent engine';

/** The engine over its in-process cache answers synchronously; the bench measures exactly that. */
function syncOutcome<T>(outcome: MaybePromise<T>): T {
  if (isPromise(outcome)) throw new Error('the in-process useragent engine answered with a promise');
  return outcome;
}
const BASELINE = 'raw new UAParser(ua).getResult() + isbot(ua)';

/** The bench corpus: 300+ real-world User-Agent formats, one per line. */
export function loadCorpus(): string[] {
  return readFileSync(new URL('../fixtures/user-agents.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** `count` distinct UAs: each corpus UA with its last number extended by a variant index. */
function distinctVariants(corpus: string[], count: number): string[] {
  const varying = corpus.filter((ua) => /\d/.test(ua));
  const out = new Set<string>();
  for (let k = 1; out.size < count; k++) {
    for (const ua of varying) out.add(ua.replace(/(\d+)(?!.*\d)/, `$1${k}`));
  }
  return [...out].slice(0, count);
}

/** `length` draws from `items` with P(rank r) proportional to 1 / r^s. */
function zipfSequence<T>(items: T[], length: number, s: number, rand: () => number): T[] {
  const weights = items.map((_, r) => 1 / (r + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cdf: number[] = [];
  weights.reduce((acc, w, i) => (cdf[i] = acc + w / total), 0);
  return Array.from({ length }, () => {
    const u = rand();
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return items[lo];
  });
}

function raw(ua: string): unknown {
  const parsed = new UAParser(ua).getResult();
  return isbot(ua) ? parsed : parsed.browser;
}

export async function run(): Promise<BenchRow[]> {
  const corpus = loadCorpus();
  const options = { durationMs: 1000, batch: 200, warmupBatches: 10 };

  // Cold: a cycle 5x longer than the cache can never hit in an LRU.
  const unique = distinctVariants(corpus, 50_000);
  const coldEngine = createUserAgentEngine();
  let coldHits = 0;
  // One position across all measuring rounds: compare() restarts i at 0 each round, and on a slow
  // machine a round shorter than the cycle would meet the previous round's entries again.
  let coldNext = 0;
  const cold = compare(
    () => {
      const outcome = syncOutcome(coldEngine.lookup(coldEngine.prepare(unique[coldNext++ % unique.length])));
      if (outcome.cached) coldHits++;
      return outcome;
    },
    (i) => raw(unique[i % unique.length]),
    3,
    options,
  );
  if (coldHits > 0) throw new Error(`cold bench is not cold: ${coldHits} cache hits`);

  // Repeated: the shuffled corpus as the popularity ranking.
  const rand = seededRandom(20261122);
  const ranked = [...corpus].sort(() => rand() - 0.5);
  const draws = zipfSequence(ranked, 100_000, 1.0, rand);
  const warmEngine = createUserAgentEngine();
  const repeated = compare(
    (i) => syncOutcome(warmEngine.lookup(warmEngine.prepare(draws[i % draws.length]))),
    (i) => raw(draws[i % draws.length]),
    3,
    options,
  );

  return [
    ...accuracyRows(),
    ratioRow(
      {
        suite: SUITE,
        case: `cold: ${unique.length.toLocaleString('en-US')} distinct UAs cycling through the default 10,000-entry LRU (every lookup a miss + eviction)`,
        baseline: BASELINE,
        opsPerSec: cold.candidate,
        baselineOpsPerSec: cold.baseline,
        target: '>= 0.83x (within 1.2x)',
      },
      1 / 1.2,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `repeated: Zipf s=1.0 over ${corpus.length} real UAs, default cache`,
        baseline: BASELINE,
        opsPerSec: repeated.candidate,
        baselineOpsPerSec: repeated.baseline,
        target: '>= 5x',
      },
      5,
    ),
  ];
}

/** A bot-rule fixture: one UA a line, `#` lines are comments (test/fixtures/useragent/SOURCES.md). */
function readUaFixture(name: string): string[] {
  return readFileSync(new URL(`../../test/fixtures/useragent/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Accuracy, not speed (ops/s holds the count right, baseline ops/s the count checked): false
 * bots on the browser corpus (browsers.txt + browsers-uap.txt), and recall on the public
 * crawler list (crawlers.txt), ours beside plain isbot.
 */
export function accuracyRows(): BenchRow[] {
  const browsers = [...readUaFixture('browsers.txt'), ...readUaFixture('browsers-uap.txt')];
  const crawlers = readUaFixture('crawlers.txt');
  const people = browsers.filter((ua) => !isBot(ua)).length;
  const found = crawlers.filter((ua) => isBot(ua)).length;
  const percent = (part: number, all: number) => `${((100 * part) / all).toFixed(2)}%`;
  const plainFalse = browsers.filter((ua) => isbot(ua)).length;
  const plainFound = crawlers.filter((ua) => isbot(ua)).length;
  return [
    ratioRow(
      {
        suite: SUITE,
        case: `accuracy: false bots on ${browsers.length.toLocaleString('en-US')} real browser UAs: ${browsers.length - people} (${percent(browsers.length - people, browsers.length)}; plain isbot ${plainFalse}, ${percent(plainFalse, browsers.length)})`,
        baseline: 'browsers called people (counts, not ops/s)',
        opsPerSec: people,
        baselineOpsPerSec: browsers.length,
        target: 'false bots <= 0.5%',
      },
      0.995,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `accuracy: bot recall on ${crawlers.length.toLocaleString('en-US')} crawler-user-agents instances: ${found} (${percent(found, crawlers.length)}; plain isbot ${plainFound}, ${percent(plainFound, crawlers.length)})`,
        baseline: 'crawlers called bots (counts, not ops/s)',
        opsPerSec: found,
        baselineOpsPerSec: crawlers.length,
        target: '>= 99.7%',
      },
      0.997,
    ),
  ];
}
