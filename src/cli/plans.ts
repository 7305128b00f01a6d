/**
 * `seclookup plans set | list`: the plan table. A plan slug has a '*' row (every product)
 * and optionally per-product rows that override it. A running server on the SQLite file applies
 * a change at once (it sees the file's commits on its next request); on Redis within the key
 * cache's time, since each server keeps a key and its plan in memory.
 */
import { assertValidPlan } from '../metering/plans.js';
import type { MeterAdmin, Plan } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import { METER_OPTIONS, expectPositionals, parseCommand, parseInteger, parseProduct, parseQuota } from './args.js';
import { chooseAdminStore, describeMeter, withMeter } from './db.js';
import { EXIT_OK, UsageError } from './errors.js';
import { formatQuota, formatTable, out, printJson } from './output.js';

export const PLANS_HELP = `Usage:
  seclookup plans set SLUG (--product PRODUCT,... | --all-products) [--rate-limit N]
                      [--monthly-quota N|unlimited] [--db FILE | --redis URL]
  seclookup plans list [--json] [--db FILE | --redis URL]

A plan sets a key's per-minute rate limit and its monthly lookup quota. Each plan has a
row for '*' (every product) and may have rows for single products, which win over '*'.
New databases start with "starter" and "enterprise" (starter has rows of its own for tls,
domainrep, pwbreach and captcha). A running server applies changes at once on a --db
file, and within 1 s on Redis (each server keeps a key and its plan in memory that long).

plans set     Create or change plan SLUG. Give --rate-limit, --monthly-quota or both;
              a limit you leave out keeps its current value. Say which products with
              --product or --all-products: one of them is required. The database must
              exist (serve, keys create or sitekeys create makes one): a --db that does
              not is refused, not created.
  --rate-limit N                  requests per minute per key (N >= 1)
  --monthly-quota N|unlimited     lookups per UTC calendar month per subscription
  --product PRODUCT,...           change only these products' rows (comma-separated or
                                  repeated); a missing row is created, taking limits
                                  you leave out from the plan's '*' row
  --all-products                  change the plan for every product: its '*' row and
                                  every product row it has, so each product gets the
                                  limits you give. A new plan gets a '*' row, and needs
                                  both limits.

plans list    Show every plan row.
  --json                          print a JSON array instead of a table

Common options (one store: --db and --redis together are refused):
  --db FILE     metering database (default: $SECLOOKUP_DB, else ./seclookup.db); given,
                it wins over $SECLOOKUP_REDIS
  --redis URL   keys, plans and usage in Redis instead, as serve --redis uses them
                (redis://host:port/db or redis+cluster://h1:p1,h2:p2;
                default: $SECLOOKUP_REDIS)
  -h, --help    show this help

Exit codes: 0 done, 1 failed (no such database, database error), 2 usage error (bad
            number, bad slug, unknown product, neither or both of --product and
            --all-products, missing limits for a new row, a flag given twice, both
            --db and --redis).`;

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

/** The rows `plans set` changes: the named products' rows, or the plan for every product. */
type Scope = { products: ProductId[] } | 'all';

async function setPlan(argv: string[]): Promise<number> {
  const command = 'plans set';
  const { values, positionals } = parseCommand(
    argv,
    {
      'rate-limit': { type: 'string' },
      'monthly-quota': { type: 'string' },
      product: { type: 'string', multiple: true },
      'all-products': { type: 'boolean' },
      ...METER_OPTIONS,
    },
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
  const scope = parseScope(values.product, values['all-products'], command);
  const store = chooseAdminStore(values, command);

  // An existing database only: a mistyped --db must not make a new one and report a plan set in it.
  const { rows, created } = await withMeter(store, { create: false }, async (meter: MeterAdmin) => {
    const sameSlug = (await meter.listPlans()).filter((p) => p.slug === slug);
    // Every row is worked out before the first write, so a refused change writes nothing.
    const targets = planRowsToWrite(slug, scope, sameSlug, change, command);
    for (const row of targets) await meter.setPlan(row);
    return { rows: (await meter.listPlans()).filter((p) => p.slug === slug), created: sameSlug.length === 0 };
  });
  const which = scope === 'all' ? 'every product' : scope.products.join(', ');
  out(`${created ? 'Created' : 'Updated'} plan "${slug}" for ${which} in ${describeMeter(store)}:`);
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
 * `--product P,...` (repeatable) or `--all-products`, exactly one. Never implied: a plan's
 * product rows may differ on purpose (starter is 60/min for tls), so changing them all at
 * once must be asked for.
 */
function parseScope(products: string[] | undefined, allProducts: boolean | undefined, command: string): Scope {
  if (products !== undefined && allProducts) throw new UsageError('give --product or --all-products, not both', command);
  if (allProducts) return 'all';
  if (products === undefined) {
    throw new UsageError(
      "say which products to change: --product PRODUCT (comma-separated or repeated) for those products only, or --all-products for every product (the plan's '*' row and every product row it has)",
      command,
    );
  }
  return { products: [...new Set(products.flatMap((v) => v.split(',')).map((v) => parseProduct(v.trim(), command)))] };
}

/**
 * Which rows to write. For products: each one's row, limits not given taken from its current
 * row or else the plan's '*' row. For every product: every existing row of the slug, product
 * rows included (they win over '*', so leaving them out would leave those products
 * unchanged), plus a '*' row when there is none.
 */
function planRowsToWrite(slug: string, scope: Scope, sameSlug: Plan[], change: LimitChange, command: string): Plan[] {
  const star = sameSlug.find((p) => p.product === '*');
  if (scope === 'all') {
    const rows = sameSlug.map((row) => applyChange(row, change));
    return star ? rows : [newRow(slug, '*', change, sameSlug, command), ...rows];
  }
  return scope.products.map((product) => {
    const base = sameSlug.find((p) => p.product === product) ?? star;
    return base ? applyChange({ ...base, product }, change) : newRow(slug, product, change, sameSlug, command);
  });
}

/** A row with nothing to take missing limits from: both must be given. */
function newRow(slug: string, product: ProductId | '*', change: LimitChange, sameSlug: Plan[], command: string): Plan {
  const { rateLimitPerMinute, monthlyQuota } = change;
  if (rateLimitPerMinute !== undefined && monthlyQuota !== undefined) return { slug, product, rateLimitPerMinute, monthlyQuota };
  const why =
    sameSlug.length === 0
      ? `plan "${slug}" does not exist yet`
      : `plan "${slug}" has no '*' row${product === '*' ? '' : ` and no ${product} row`} (it has rows for ${sameSlug.map((p) => p.product).join(', ')})`;
  throw new UsageError(`${why}: give both --rate-limit and --monthly-quota`, command);
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
  const { values, positionals } = parseCommand(argv, { json: { type: 'boolean' }, ...METER_OPTIONS }, command);
  if (values.help) return printHelp();
  expectPositionals(positionals, [], command);
  const store = chooseAdminStore(values, command);

  const plans = await withMeter(store, { create: false, write: false }, (meter: MeterAdmin) => meter.listPlans());
  if (values.json) {
    printJson(plans.map((p) => ({ slug: p.slug, product: p.product, rate_limit_per_minute: p.rateLimitPerMinute, monthly_quota: p.monthlyQuota })));
  } else if (plans.length === 0) {
    out('No plans. Create one with `seclookup plans set SLUG --all-products --rate-limit N --monthly-quota N`.');
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
