/**
 * `npm run fuzz`: the long fuzz run (test/fuzz/run.ts). Prints one row per route (requests,
 * statuses seen, 500s, hangs) and the totals; exits 1 on any 500, hang, malformed error
 * envelope or leaked upstream key.
 *
 *   npm run fuzz                          # 1,000 hostile requests per route
 *   npm run fuzz -- --per-route 5000 --seed 42 --filter whois
 *   npm run fuzz -- --adapter fastify     # or express (default: node)
 */
import { parseArgs } from 'node:util';
import { runFuzz, type FuzzAdapter, type RouteReport } from '../test/fuzz/run.js';

function adapterOf(value: string | undefined): FuzzAdapter {
  if (value === 'node' || value === 'express' || value === 'fastify') return value;
  console.error(`--adapter must be node, express or fastify (got ${value})`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    'per-route': { type: 'string', default: '1000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    filter: { type: 'string' },
    adapter: { type: 'string', default: 'node' },
  },
});

const statuses = (row: RouteReport) =>
  Object.entries(row.statuses)
    .map(([status, count]) => `${status}x${count}`)
    .join(' ');

console.log(`${'route'.padEnd(40)} ${'requests'.padStart(8)} ${'500s'.padStart(5)} ${'hangs'.padStart(5)}  statuses`);
const report = await runFuzz({
  perRoute: Number(values['per-route']),
  seed: values.seed === undefined ? undefined : Number(values.seed),
  concurrency: Number(values.concurrency),
  filter: values.filter,
  adapter: adapterOf(values.adapter),
  onRoute: (row) => {
    console.log(
      `${row.route.padEnd(40)} ${String(row.requests).padStart(8)} ${String(row.internalErrors).padStart(5)} ${String(row.hangs).padStart(5)}  ${statuses(row)}`,
    );
    for (const example of row.examples) console.log(`    ${example}`);
  },
});
const failed = report.internalErrors + report.hangs + report.badEnvelopes + report.leaks;
console.log(
  `\n${report.requests} requests over ${report.routes.length} routes in ${(report.durationMs / 1000).toFixed(0)} s (seed ${report.seed}): ` +
    `${report.internalErrors} x 500, ${report.hangs} hangs, ${report.badEnvelopes} malformed error answers, ${report.leaks} leaked keys`,
);
for (const error of report.reportedErrors.slice(0, 5)) console.log(`\nreported by onError:\n${error}`);
process.exit(failed === 0 ? 0 : 1);
