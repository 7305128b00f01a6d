/**
 * `seclookup usage`: the billed lookups of each subscription and product for one UTC month, as
 * the meter holds them (what serve counted against the monthly quotas), by month or by day.
 */
import type { MeterAdmin, UsageRow } from '../metering/types.js';
import { quotaPeriod } from '../lib/calendar.js';
import { compareUsageRows, isValidPeriod } from '../metering/store-logic.js';
import { METER_OPTIONS, expectPositionals, parseCommand } from './args.js';
import { chooseAdminStore, withMeter } from './db.js';
import { EXIT_OK, UsageError } from './errors.js';
import { formatTable, out, printJson } from './output.js';

export const USAGE_HELP = `Usage: seclookup usage [--month YYYY-MM] [--daily] [--json] [--db FILE | --redis URL]

The billed lookups of each subscription and product in one UTC month (default: this month):
what serve counted against the monthly quotas. Lookups still in flight are not in it yet;
units held by a server that stopped without giving them back are given back first, as serve
does once their lease has run out.

  --month YYYY-MM   the month (UTC)
  --daily           one row per day instead of one per month
  --json            print a JSON array: subscription_id, product, month (or day with
                    --daily), lookups
  --db FILE         metering database (default: $SECLOOKUP_DB, else ./seclookup.db); given,
                    it wins over $SECLOOKUP_REDIS
  --redis URL       the usage in Redis instead, as serve --redis counts it (default:
                    $SECLOOKUP_REDIS); --db and --redis together are refused
  -h, --help        show this help

Exit codes: 0 done, 1 failed (no such database, a store error), 2 usage error (a bad month,
            an unknown option, both --db and --redis).`;

export async function runUsage(argv: string[]): Promise<number> {
  const command = 'usage';
  const { values, positionals } = parseCommand(
    argv,
    { month: { type: 'string' }, daily: { type: 'boolean' }, json: { type: 'boolean' }, ...METER_OPTIONS },
    command,
  );
  if (values.help) {
    out(USAGE_HELP);
    return EXIT_OK;
  }
  expectPositionals(positionals, [], command);
  const month = values.month ?? quotaPeriod(Date.now());
  if (!isValidPeriod(month)) throw new UsageError(`--month must be a month as YYYY-MM (got ${JSON.stringify(month.slice(0, 20))})`, command);
  const store = chooseAdminStore(values, command);

  // Not read-only: expired holds are given back first, a write.
  const rows = await withMeter(store, { create: false }, (meter: MeterAdmin) => meter.usage(month));
  const totals = values.daily ? rows : monthTotals(rows, month);
  if (values.json) {
    printJson(
      totals.map((row) => ({ subscription_id: row.subscriptionId, product: row.product, [values.daily ? 'day' : 'month']: row.day, lookups: row.lookups })),
    );
  } else if (totals.length === 0) {
    out(`No billed lookups in ${month}.`);
  } else {
    out(
      formatTable(
        ['SUBSCRIPTION', 'PRODUCT', values.daily ? 'DAY' : 'MONTH', 'LOOKUPS'],
        totals.map((row) => [row.subscriptionId, row.product, row.day, String(row.lookups)]),
      ),
    );
  }
  return EXIT_OK;
}

/** The day rows summed per subscription and product (`day` then holds the month), by subscription then product. */
function monthTotals(rows: readonly UsageRow[], month: string): UsageRow[] {
  const totals = new Map<string, UsageRow>();
  for (const row of rows) {
    const key = `${row.subscriptionId}\u0000${row.product}`;
    const total = totals.get(key);
    if (total) total.lookups += row.lookups;
    else totals.set(key, { subscriptionId: row.subscriptionId, product: row.product, day: month, lookups: row.lookups });
  }
  return [...totals.values()].sort(compareUsageRows);
}
