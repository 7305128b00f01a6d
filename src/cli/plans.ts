/**
 * `seclookup plans set | list`: the plan table. A plan slug has a '*' row (every product)
 * and optionally per-product rows that override it. Changes apply at once, also to a running
 * server, because the store reads plans on every key lookup.
 */
import { assertValidPlan } from '../metering/plans.js';
import type { Plan } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import { DB_OPTION, expectPositionals, parseCommand, parseInteger, parseProduct, parseQuota, resolveDbPath } from './args.js';
import { withMeter } from './db.js';
import { EXIT_OK, UsageError } from './errors.js';
import { formatQuota, formatTable, out, printJson } from './output.js';

export const PLANS_HELP = `Usage:
  seclookup plans set SLUG [--rate-limit N] [--monthly-quota N|unlimited] [--product PRODUCT] [--db FILE]
  seclookup plans list [--json] [--db FILE]

A plan sets a key's per-minute rate limit and its monthly lookup quota. Each plan has a
row for '*' (every product) and may have rows for single products, which win over '*'.
New databases start with "starter" and "enterprise". Changes apply at once, also to a
running server.

plans set     Create or change plan SLUG. Give --rate-limit, --monthly-quota or both;
              a limit you leave out keeps its current value.
  --rate-limit N                  requests per minute per key (N >= 1)
  --monthly-quota N|unlimited     lookups per UTC calendar month per subscription
  --product PRODUCT               change only that product's row (created if absent,
                                  taking missing limits from the plan's '*' row)
              Without --product: if SLUG exists, every row of it (all products) gets the
              limits you give; if not, a '*' row is created and both limits are required.

plans list    Show every plan row.
  --json                          print a JSON array instead of a table

Common options:
  --db FILE     metering database (default: $SECLOOKUP_DB, else ./seclookup.db)
  -h, --help    show this help

Exit codes: 0 done, 1 failed (database error), 2 usage error (bad number, bad slug,
            unknown product, missing limits for a new plan).`;

export async function runPlans(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'set':
      return setPlan(rest);
    case 'list':
      return listPlans(rest);
    case undefined:
      throw new UsageError('missing subcommand: set or list', 'plans');
    default:
      if (sub === '-h' || sub === '--help') return printHelp();
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use set or list`, 'plans');
  }
}

function printHelp(): number {
  out(PLANS_HELP);
  return EXIT_OK;
}

/** Limits given on the command line; undefined means "not given, keep the current value". */
interface LimitChange {
  rateLimitPerMinute?: number;
  monthlyQuota?: number | null;
}

async function setPlan(argv: string[]): Promise<number> {
  const command = 'plans set';
  const { values, positionals } = parseCommand(
    argv,
    { 'rate-limit': { type: 'string' }, 'monthly-quota': { type: 'string' }, product: { type: 'string' }, ...DB_OPTION },
    command,
  );
  if (values.help) return printHelp();
  const [slug] = expectPositionals(positionals, ['SLUG'], command);
  assertValidSlug(slug, command);
  const change: LimitChange = {
    rateLimitPerMinute: values['rate-limit'] === undefined ? undefined : parseInteger(values['rate-limit'], '--rate-limit', command, { min: 1 }),
    monthlyQuota: values['monthly-quota'] === undefined ? undefined : parseQuota(values['monthly-quota'], '--monthly-quota', command),
  };
  if (change.rateLimitPerMinute === undefined && change.monthlyQuota === undefined) {
    throw new UsageError('nothing to set: give --rate-limit N, --monthly-quota N|unlimited, or both', command);
  }
  const product = values.product === undefined ? undefined : parseProduct(values.product, command);

  const { rows, created } = await withMeter(resolveDbPath(values.db), { create: true }, async (meter) => {
    const sameSlug = (await meter.listPlans()).filter((p) => p.slug === slug);
    const targets = planRowsToWrite(slug, product, sameSlug, change, command);
    for (const row of targets) await meter.setPlan(row);
    return { rows: (await meter.listPlans()).filter((p) => p.slug === slug), created: sameSlug.length === 0 };
  });
  out(`${created ? 'Created' : 'Updated'} plan "${slug}":`);
  out(plansTable(rows));
  return EXIT_OK;
}

function assertValidSlug(slug: string, command: string): void {
  try {
    assertValidPlan({ slug, product: '*', rateLimitPerMinute: 1, monthlyQuota: null });
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
}

/**
 * Which rows to write. With a product: that product's row, filling limits not given from its
 * current row or else the plan's '*' row. Without: every existing row of the slug, or a new
 * '*' row when the slug is new (then both limits must be given).
 */
function planRowsToWrite(slug: string, product: ProductId | undefined, sameSlug: Plan[], change: LimitChange, command: string): Plan[] {
  if (product === undefined && sameSlug.length > 0) return sameSlug.map((row) => applyChange(row, change));
  const base = product === undefined ? undefined : (sameSlug.find((p) => p.product === product) ?? sameSlug.find((p) => p.product === '*'));
  const rateLimitPerMinute = change.rateLimitPerMinute ?? base?.rateLimitPerMinute;
  const monthlyQuota = change.monthlyQuota !== undefined ? change.monthlyQuota : base?.monthlyQuota;
  if (rateLimitPerMinute === undefined || monthlyQuota === undefined) {
    throw new UsageError(`plan "${slug}" does not exist yet: give both --rate-limit and --monthly-quota`, command);
  }
  return [{ slug, product: product ?? '*', rateLimitPerMinute, monthlyQuota }];
}

function applyChange(row: Plan, change: LimitChange): Plan {
  return {
    ...row,
    rateLimitPerMinute: change.rateLimitPerMinute ?? row.rateLimitPerMinute,
    monthlyQuota: change.monthlyQuota !== undefined ? change.monthlyQuota : row.monthlyQuota,
  };
}

async function listPlans(argv: string[]): Promise<number> {
  const command = 'plans list';
  const { values, positionals } = parseCommand(argv, { json: { type: 'boolean' }, ...DB_OPTION }, command);
  if (values.help) return printHelp();
  expectPositionals(positionals, [], command);

  const plans = await withMeter(resolveDbPath(values.db), { create: false }, (meter) => meter.listPlans());
  if (values.json) {
    printJson(plans.map((p) => ({ slug: p.slug, product: p.product, rate_limit_per_minute: p.rateLimitPerMinute, monthly_quota: p.monthlyQuota })));
  } else if (plans.length === 0) {
    out('No plans. Create one with `seclookup plans set SLUG --rate-limit N --monthly-quota N`.');
  } else {
    out(plansTable(plans));
    out("\n'*' applies to every product that has no row of its own in the same plan.");
  }
  return EXIT_OK;
}

function plansTable(plans: readonly Plan[]): string {
  return formatTable(
    ['PLAN', 'PRODUCT', 'RATE/MIN', 'MONTHLY QUOTA'],
    plans.map((p) => [p.slug, p.product, String(p.rateLimitPerMinute), formatQuota(p.monthlyQuota)]),
  );
}
