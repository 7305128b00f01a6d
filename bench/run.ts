/**
 * `npm run bench`: runs every bench file (or the ones named: `npm run bench -- useragent http`),
 * prints one table of ratios against the named baselines, and writes it to bench/results/latest.md.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../src/products/registry.js';
import { reportSections, type BenchRow } from './harness.js';

type Suite = () => Promise<{ run(): Promise<BenchRow[]> }>;

/**
 * A product's engine bench is `bench/products/<id>.ts` (outside src/, so the source never imports
 * the bench harness or the test servers), found through the registry; then the cross-cutting ones.
 */
const productSuites: [string, Suite][] = [...PRODUCT_MODULES, ...SERVICE_MODULES]
  .map((module) => module.id)
  .filter((id) => existsSync(new URL(`./products/${id}.ts`, import.meta.url)))
  .map((id) => [id, () => import(`./products/${id}.ts`)]);

/** Suites that run a part of another one, left out when no suite is named. */
const PART_OF_ANOTHER = new Set(['serve']);

const SUITES: Record<string, Suite> = {
  ...Object.fromEntries(productSuites),
  metering: () => import('./metering.js'),
  batch: () => import('./batch.js'),
  redis: () => import('./redis.js'),
  // `seclookup serve --redis`, one and two instances, against serve on SQLite.
  'serve-redis': () => import('./http.js').then((http) => ({ run: http.runServeRedis })),
  dns: () => import('./dns.js'),
  scale: () => import('./scale.js'),
  http: () => import('./http.js'),
  // The serve rows of http alone: about a minute instead of five.
  serve: () => import('./http.js').then((http) => ({ run: http.runServe })),
  // Every product route through serve against bare Node on the same bytes, the adapters, the CPU budget and RSS: about three minutes.
  routes: () => import('./routes.js'),
};

function formatOps(ops: number | null): string {
  return ops === null ? '' : Math.round(ops).toLocaleString('en-US');
}

function toMarkdown(rows: BenchRow[]): string {
  const header = '| suite | case | baseline | ops/s | baseline ops/s | ratio | target | met |\n|---|---|---|---:|---:|---:|---|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.suite} | ${r.case} | ${r.baseline || '-'} | ${formatOps(r.opsPerSec)} | ${formatOps(r.baselineOpsPerSec)} | ${r.ratio === null ? '-' : r.ratio.toFixed(2) + 'x'} | ${r.target} | ${r.met ? 'yes' : 'NO'} |`,
  );
  return [header, ...lines].join('\n');
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in SUITES));
  if (unknown.length) {
    console.error(`unknown bench suite(s): ${unknown.join(', ')}; known: ${Object.keys(SUITES).join(', ')}`);
    process.exit(2);
  }
  const rows: BenchRow[] = [];
  for (const name of wanted.length ? wanted : Object.keys(SUITES).filter((suite) => !PART_OF_ANOTHER.has(suite))) {
    console.error(`running ${name}...`);
    const suite = await SUITES[name]();
    rows.push(...(await suite.run()));
  }
  const table = [toMarkdown(rows), ...reportSections].join('\n\n');
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
  writeFileSync(new URL('./results/latest.md', import.meta.url), `# Bench results\n\n${new Date().toISOString()} on ${machine}\n\n${table}\n`);
  console.log(table);
  console.error('\nwritten to bench/results/latest.md');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
