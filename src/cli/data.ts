/**
 * `seclookup data update PRODUCT`: refresh a bundled dataset from its public sources. The
 * products with an updatable dataset, and what each update does, come from the registry.
 */
import { bundledDataDir } from '../lib/datasets.js';
import type { AnyProductModule, DatasetUpdateReport, ProductDataset } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';
import { DATA_DIR_OPTION, expectPositionals, parseCommand, parseInteger, parseProduct, resolveDataDir } from './args.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out } from './output.js';

const UPDATABLE = (PRODUCT_MODULES as readonly AnyProductModule[]).filter((module): module is AnyProductModule & { dataset: ProductDataset } => module.dataset !== undefined);

export const DATA_HELP = `Usage:
  seclookup data update PRODUCT [--data-dir DIR] [--mirror URL] [--timeout MS]

Download a dataset's sources again and rewrite it. Products with an updatable dataset:
${UPDATABLE.map((module) => module.id).join(', ')}.

${UPDATABLE.map((module) => module.dataset.help).join('\n\n')}

  --data-dir DIR     dataset folder to update (default: $SECLOOKUP_DATA_DIR, else the
                     data bundled with seclookup, which must then be writable)
  --mirror URL       fetch each source https://HOST/PATH from URL/HOST/PATH instead
                     (an internal mirror or an offline copy)
  --timeout MS       per-request timeout in milliseconds (default: the product's own)
  -h, --help         show this help

Progress goes to stderr, the summary to stdout. A running \`seclookup serve\` keeps the
data it loaded; restart it to use the new data.

Exit codes: 0 the dataset is valid afterwards (even if some sources failed: what they
            feed kept its previous values), 1 every source failed or the file could
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
  const module = UPDATABLE.find((candidate) => candidate.id === product);
  if (!module) throw new UsageError(`${product} has no updatable dataset; updatable: ${UPDATABLE.map((m) => m.id).join(', ')}`, command);
  const timeoutMs = values.timeout === undefined ? undefined : parseInteger(values.timeout, '--timeout', command, { min: 1 });
  if (values.mirror !== undefined) assertHttpUrl(values.mirror, command);
  const dataDir = resolveDataDir(values['data-dir']) ?? bundledDataDir();

  let report: DatasetUpdateReport;
  try {
    report = await module.dataset.update({ dataDir, mirror: values.mirror, timeoutMs, onProgress: (line) => note(line) });
  } catch (error) {
    throw new CommandError(`${product} update failed, dataset left unchanged: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  out(report.summary);
  for (const line of report.notes) note(line);
  return report.ok ? EXIT_OK : EXIT_FAILURE;
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
