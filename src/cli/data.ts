/**
 * `seclookup data update PRODUCT`: refresh a bundled dataset from its public sources;
 * `seclookup data import PRODUCT FILE...`: build a dataset from files the operator has. The
 * products with an updatable or importable dataset, and what each does, come from the registry.
 */
import { bundledDataDir } from '../lib/datasets.js';
import type { AnyProductModule, DatasetUpdateReport, ImportProgress, ProductDataset } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';
import { DATA_DIR_OPTION, expectPositionals, parseCommand, parseInteger, parseProduct, resolveDataDir } from './args.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out } from './output.js';
import { cliIo, cliPath } from './io.js';

type WithDataset<Op extends 'update' | 'import'> = AnyProductModule & { dataset: ProductDataset & Required<Pick<ProductDataset, Op>> };
const MODULES = PRODUCT_MODULES as readonly AnyProductModule[];
const UPDATABLE = MODULES.filter((module): module is WithDataset<'update'> => module.dataset?.update !== undefined);
const IMPORTABLE = MODULES.filter((module): module is WithDataset<'import'> => module.dataset?.import !== undefined);

export const DATA_HELP = `Usage:
  seclookup data update PRODUCT [--data-dir DIR] [--mirror URL] [--timeout MS] [--source NAME]
  seclookup data import PRODUCT FILE|DIR... [--data-dir DIR] [--out FILE] [--skip-corrupt]
                        [--tmp-dir DIR] [--progress]

update: download a dataset's sources again and rewrite it. Products with an updatable
dataset: ${UPDATABLE.map((module) => module.id).join(', ')}.
import: build a dataset from files you have. Products with an importable dataset:
${IMPORTABLE.map((module) => module.id).join(', ')}.

${MODULES.filter((module) => module.dataset)
  .map((module) => module.dataset!.help)
  .join('\n\n')}

  --data-dir DIR     dataset folder to update (default: $SECLOOKUP_DATA_DIR, else the
                     data bundled with seclookup, which must then be writable)
  --mirror URL       fetch each source https://HOST/PATH from URL/HOST/PATH instead
                     (an internal mirror or an offline copy)
  --timeout MS       per-request timeout in milliseconds (default: the product's own)
  --source NAME      update: only these sources of the product (comma-separated)
  --out FILE         import: write the dataset here instead of its place in the data folder
  --skip-corrupt     import: import the good lines when some are corrupt (default: refuse)
  --tmp-dir DIR      import: folder for temporary files (default: beside the dataset)
  --progress         import: draw the progress bar even when stderr is not a terminal
  -h, --help         show this help

Progress goes to stderr (import: a progress bar when stderr is a terminal), the summary
to stdout. A running \`seclookup serve\` keeps the data it loaded; restart it to use the
new data.

Exit codes: 0 the dataset is valid afterwards (even if some sources failed: what they
            feed kept its previous values), 1 every source failed, the input was
            refused, or the file could not be written (the dataset is unchanged), 2 usage
            error (unknown product or one without such a dataset).`;

export async function runData(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'update') return update(rest);
  if (sub === 'import') return importFiles(rest);
  if (sub === '-h' || sub === '--help') {
    out(DATA_HELP);
    return EXIT_OK;
  }
  if (sub === undefined) throw new UsageError('missing subcommand: update or import', 'data');
  throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use update or import`, 'data');
}

async function update(argv: string[]): Promise<number> {
  const command = 'data update';
  const { values, positionals } = parseCommand(
    argv,
    { mirror: { type: 'string' }, timeout: { type: 'string' }, source: { type: 'string' }, ...DATA_DIR_OPTION },
    command,
  );
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
    report = await module.dataset.update({ dataDir, mirror: values.mirror, timeoutMs, source: values.source, onProgress: (line) => note(line) });
  } catch (error) {
    throw new CommandError(`${product} update failed, dataset left unchanged: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  out(report.summary);
  for (const line of report.notes) note(line);
  return report.ok ? EXIT_OK : EXIT_FAILURE;
}

async function importFiles(argv: string[]): Promise<number> {
  const command = 'data import';
  const { values, positionals } = parseCommand(
    argv,
    { out: { type: 'string' }, 'skip-corrupt': { type: 'boolean' }, 'tmp-dir': { type: 'string' }, progress: { type: 'boolean' }, ...DATA_DIR_OPTION },
    command,
  );
  if (values.help) {
    out(DATA_HELP);
    return EXIT_OK;
  }
  const [productName, ...files] = positionals;
  if (productName === undefined) throw new UsageError('missing PRODUCT and FILE', command);
  const product = parseProduct(productName, command);
  const module = IMPORTABLE.find((candidate) => candidate.id === product);
  if (!module) throw new UsageError(`${product} has no importable dataset; importable: ${IMPORTABLE.map((m) => m.id).join(', ')}`, command);
  if (files.length === 0) throw new UsageError('missing FILE (a file or a folder to import)', command);
  const dataDir = resolveDataDir(values['data-dir']) ?? bundledDataDir();
  const bar = values.progress || cliIo().stderr.isTTY ? createProgressBar() : undefined;

  let report: DatasetUpdateReport;
  try {
    report = await module.dataset.import({
      dataDir,
      files: files.map(cliPath),
      out: values.out === undefined ? undefined : cliPath(values.out),
      skipCorrupt: values['skip-corrupt'] ?? false,
      tmpDir: values['tmp-dir'],
      onProgress: (line) => {
        bar?.clear();
        note(line);
      },
      onProgressBar: bar?.update,
    });
  } catch (error) {
    bar?.clear();
    throw new CommandError(`${product} import failed, dataset left unchanged: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  bar?.clear();
  out(report.summary);
  for (const line of report.notes) note(line);
  return report.ok ? EXIT_OK : EXIT_FAILURE;
}

const BAR_WIDTH = 30;
/** Redraws at most this often. */
const BAR_INTERVAL_MS = 100;

/**
 * A one-line progress bar on stderr, redrawn in place (`\r`) at most ten times a second:
 * `[##########....................]  33% reading 1.2 GB of 3.6 GB`.
 */
function createProgressBar() {
  let last = 0;
  let drawn = false;
  return {
    update(progress: ImportProgress): void {
      const now = performance.now();
      if (now - last < BAR_INTERVAL_MS && progress.done < progress.total) return;
      last = now;
      const fraction = progress.total > 0 ? Math.min(1, progress.done / progress.total) : 1;
      const filled = Math.round(fraction * BAR_WIDTH);
      const amount =
        progress.unit === 'bytes' ? `${formatSize(progress.done)} of ${formatSize(progress.total)}` : `${progress.done} of ${progress.total} ${progress.unit}`;
      cliIo().stderr.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${progress.phase} ${amount}\x1b[K`,
      );
      drawn = true;
    },
    /** End the bar's line, so the next message starts on its own. */
    clear(): void {
      if (drawn) cliIo().stderr.write('\n');
      drawn = false;
    },
  };
}

function formatSize(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024).toFixed(1)} KB`;
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
