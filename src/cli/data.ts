/**
 * `seclookup data update PRODUCT`: refresh a bundled dataset from its public sources.
 * Only webhookip has an updater today.
 */
import { bundledDataDir } from '../lib/datasets.js';
import { updateWebhookRanges, type WebhookUpdateReport } from '../products/webhookip/update.js';
import { DATA_DIR_OPTION, expectPositionals, parseCommand, parseInteger, parseProduct, resolveDataDir } from './args.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out } from './output.js';

const UPDATABLE = ['webhookip'];

export const DATA_HELP = `Usage:
  seclookup data update PRODUCT [--data-dir DIR] [--mirror URL] [--timeout MS]

Download a dataset's sources again and rewrite it. Products with an updatable dataset:
${UPDATABLE.join(', ')}.

webhookip fetches each provider's published feed (GitHub meta, Stripe, Paddle, ...). A
provider whose feed fails keeps its previous ranges; providers without a machine-readable
feed are kept as they are. The file is rewritten only when something changed.

  --data-dir DIR     dataset folder to update (default: $SECLOOKUP_DATA_DIR, else the
                     data bundled with seclookup, which must then be writable)
  --mirror URL       fetch each feed https://HOST/PATH from URL/HOST/PATH instead
                     (an internal mirror or an offline copy)
  --timeout MS       per-feed timeout in milliseconds (default: 15000)
  -h, --help         show this help

Progress goes to stderr, the summary to stdout. A running \`seclookup serve\` keeps the
ranges it loaded; restart it to use the new ones.

Exit codes: 0 the dataset is valid afterwards (even if some feeds failed: their
            providers kept their previous ranges), 1 every feed failed or the file could
            not be written, 2 usage error (unknown product or one without a dataset).`;

export async function runData(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'update') return update(rest);
  if (sub === '-h' || sub === '--help') {
    out(DATA_HELP);
    return EXIT_OK;
  }
  if (sub === undefined) throw new UsageError('missing subcommand: update', 'data');
  throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use update`, 'data');
}

async function update(argv: string[]): Promise<number> {
  const command = 'data update';
  const { values, positionals } = parseCommand(argv, { mirror: { type: 'string' }, timeout: { type: 'string' }, ...DATA_DIR_OPTION }, command);
  if (values.help) {
    out(DATA_HELP);
    return EXIT_OK;
  }
  const [productName] = expectPositionals(positionals, ['PRODUCT'], command);
  const product = parseProduct(productName, command);
  if (product !== 'webhookip') throw new UsageError(`${product} has no updatable dataset; updatable: ${UPDATABLE.join(', ')}`, command);
  const timeoutMs = values.timeout === undefined ? undefined : parseInteger(values.timeout, '--timeout', command, { min: 1 });
  if (values.mirror !== undefined) assertHttpUrl(values.mirror, command);
  const dataDir = resolveDataDir(values['data-dir']) ?? bundledDataDir();

  let result: WebhookUpdateReport;
  try {
    result = await updateWebhookRanges({ dataDir, mirror: values.mirror, timeoutMs, onProgress: (line) => note(line) });
  } catch (error) {
    throw new CommandError(`webhookip update failed, dataset left unchanged: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  // The updater has already printed one progress line per provider, failures included.
  const { updated, unchanged, kept, failed } = result;
  out(
    `webhookip: ${updated.length} updated, ${unchanged.length} unchanged, ${kept.length} kept (no feed), ${failed.length} failed; ` +
      (result.changed ? `wrote ${result.path}` : `${result.path} not changed`),
  );
  if (updated.length + unchanged.length === 0 && failed.length > 0) {
    note('Every feed failed, so nothing was updated: check the network, or --mirror and --timeout.');
    return EXIT_FAILURE;
  }
  if (failed.length > 0) note(`${failed.map((f) => f.id).join(', ')}: feed failed, previous ranges kept. The dataset is valid.`);
  if (result.changed) note('Restart `seclookup serve` to load the new ranges.');
  return EXIT_OK;
}

function assertHttpUrl(value: string, command: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--mirror must be an http(s) URL (got ${JSON.stringify(value)})`, command);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--mirror must be an http(s) URL (got ${JSON.stringify(value)})`, command);
}

