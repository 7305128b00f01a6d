/**
 * `seclookup data update PRODUCT`: refresh a bundled dataset from its public sources;
 * `seclookup data import PRODUCT FILE...`: build a dataset from files the operator has. The
 * products with an updatable or importable dataset, and what each does, come from the registry.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { mayCreateFilesIn, statOrNull } from '../lib/file-access.js';
import { basename, dirname, join, sep } from 'node:path';
import { bundledDataDir } from '../lib/datasets.js';
import { redactUserinfo } from '../lib/redact-url.js';
import type { AnyProductModule, DatasetUpdateReport, ImportProgress, ProductDataset } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';
import { MAX_TIMER_MS } from '../lib/deadline.js';
import { DATA_DIR_OPTION, emptyValueMessage, expectPositionals, isBlank, parseCommand, parseInteger, parseProduct, resolveDataDir } from './args.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out } from './output.js';
import { cliIo, cliPath } from './io.js';
import { shellWord } from './shell-word.js';

type WithDataset<Op extends 'update' | 'import'> = AnyProductModule & { dataset: ProductDataset & Required<Pick<ProductDataset, Op>> };
const MODULES = PRODUCT_MODULES as readonly AnyProductModule[];
const UPDATABLE = MODULES.filter((module): module is WithDataset<'update'> => module.dataset?.update !== undefined);
const IMPORTABLE = MODULES.filter((module): module is WithDataset<'import'> => module.dataset?.import !== undefined);

export const DATA_HELP = `Usage:
  seclookup data init DIR
  seclookup data update PRODUCT [--data-dir DIR] [--mirror URL] [--timeout MS] [--source NAME]
  seclookup data import PRODUCT FILE|DIR... [--data-dir DIR] [--out FILE] [--skip-corrupt]
                        [--allow-partial] [--tmp-dir DIR] [--progress]

init: copy the datasets bundled with seclookup into DIR (which must be empty or new),
so that updates go there and survive reinstalls: then run serve and data update with
--data-dir DIR (or $SECLOOKUP_DATA_DIR=DIR).
update: download a dataset's sources again and rewrite it. Products with an updatable
dataset: ${UPDATABLE.map((module) => module.id).join(', ')}.
import: build a dataset from files you have. Products with an importable dataset:
${IMPORTABLE.map((module) => module.id).join(', ')}.

${MODULES.filter((module) => module.dataset)
  .map((module) => module.dataset!.help)
  .join('\n\n')}

  --data-dir DIR     dataset folder to update (default: $SECLOOKUP_DATA_DIR, else the
                     data bundled with seclookup: refused when that is inside
                     node_modules, where a reinstall would undo the update)
  --mirror URL       fetch each source https://HOST/PATH from URL/HOST/PATH instead
                     (an internal mirror or an offline copy; no ?query or #fragment)
  --timeout MS       per-request timeout in milliseconds, at most 2147483647 (default: the
                     product's own)
  --source NAME      update: only these sources of the product (comma-separated):
${UPDATABLE.flatMap(({ id, dataset }) => (dataset.sources ? [`                     ${id}: ${dataset.sources.names.join(', ')}`] : []))
  .sort()
  .join('\n')};
                     the other products have one source and refuse it
  --out FILE         import: write the dataset here instead of its place in the data folder
                     (a file, in a folder that exists)
  --skip-corrupt     import: import the good lines when some are corrupt (default: refuse)
  --allow-partial    import: import input known to be incomplete, with a warning (pwbreach:
                     a folder lacking some of the 1,048,576 prefix files; default: refuse)
  --tmp-dir DIR      import: folder for temporary files, which must exist (default: beside
                     the dataset)
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
  if (sub === 'init') return init(rest);
  if (sub === 'update') return update(rest);
  if (sub === 'import') return importFiles(rest);
  if (sub === '-h' || sub === '--help') {
    out(DATA_HELP);
    return EXIT_OK;
  }
  if (sub === undefined) throw new UsageError('missing subcommand: init, update or import', 'data');
  throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use init, update or import`, 'data');
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
  // Node's timers hold at most 2^31 - 1 ms: a longer one fires at once, failing every request.
  const timeoutMs = values.timeout === undefined ? undefined : parseInteger(values.timeout, '--timeout', command, { min: 1, max: MAX_TIMER_MS });
  if (values.mirror !== undefined) assertHttpUrl(values.mirror, command);
  if (values.source !== undefined) checkSources(product, values.source, command);
  const dataDir = writableDataDir(values['data-dir'], command);

  // A mirror's URL may carry a password: every line that could quote it is redacted.
  let report: DatasetUpdateReport;
  try {
    report = await module.dataset.update({
      dataDir,
      mirror: values.mirror,
      timeoutMs,
      source: values.source,
      onProgress: (line) => note(redactUserinfo(line)),
    });
  } catch (error) {
    throw new CommandError(`${product} update failed, dataset left unchanged: ${redactUserinfo(errorText(error))}`, { cause: error });
  }
  out(redactUserinfo(report.summary));
  for (const line of report.notes) note(redactUserinfo(line));
  return report.ok ? EXIT_OK : EXIT_FAILURE;
}

async function importFiles(argv: string[]): Promise<number> {
  const command = 'data import';
  const { values, positionals } = parseCommand(
    argv,
    {
      out: { type: 'string' },
      'skip-corrupt': { type: 'boolean' },
      'allow-partial': { type: 'boolean' },
      'tmp-dir': { type: 'string' },
      progress: { type: 'boolean' },
      ...DATA_DIR_OPTION,
    },
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
  const dataDir = writableDataDir(values['data-dir'], command);
  // Checked before any work: an import of gigabytes must not fail at its last step.
  const outFile = values.out === undefined ? undefined : cliPath(values.out);
  if (outFile !== undefined) checkOutFile(outFile);
  else checkDataDir(dataDir);
  const tmpDir = values['tmp-dir'] === undefined ? undefined : cliPath(values['tmp-dir']);
  if (tmpDir !== undefined) checkTmpDir(tmpDir);
  const bar = values.progress || cliIo().stderr.isTTY ? createProgressBar() : undefined;

  let report: DatasetUpdateReport;
  try {
    report = await module.dataset.import({
      dataDir,
      files: files.map(cliPath),
      out: outFile,
      skipCorrupt: values['skip-corrupt'] ?? false,
      allowPartial: values['allow-partial'] ?? false,
      tmpDir,
      onProgress: (line) => {
        bar?.clear();
        note(line);
      },
      onProgressBar: bar?.update,
    });
  } catch (error) {
    bar?.clear();
    throw new CommandError(`${product} import failed, dataset left unchanged: ${errorText(error)}`, { cause: error });
  }
  bar?.clear();
  out(report.summary);
  for (const line of report.notes) note(line);
  return report.ok ? EXIT_OK : EXIT_FAILURE;
}

/**
 * `--source` for `product`: its own names only (its dataset's `sources`), checked before any
 * download, so an unknown name is a usage error; a product with one source refuses the flag
 * instead of fetching everything.
 */
function checkSources(product: string, text: string, command: string): void {
  const sources = MODULES.find((module) => module.id === product)?.dataset?.sources;
  if (!sources) {
    const withSources = MODULES.filter((module) => module.dataset?.sources)
      .map((module) => module.id)
      .sort();
    throw new UsageError(`${product} has no sources to choose from (--source is for ${withSources.join(' and ')}); leave it out`, command);
  }
  try {
    sources.parse(text);
  } catch (error) {
    throw new UsageError(`--source: ${errorText(error)}`, command);
  }
}

/** `--out FILE`: a file (or none yet) in a folder that exists and this user may write. */
function checkOutFile(path: string): void {
  const stats = statOrNull(path);
  if (stats?.isDirectory()) throw new CommandError(`--out ${path} is a folder: give the path of the file to write`);
  if (stats && !stats.isFile()) throw new CommandError(`--out ${path} is not a regular file`);
  const folder = dirname(path);
  const folderStats = statOrNull(folder);
  if (!folderStats) throw new CommandError(`--out ${path}: the folder ${folder} does not exist`);
  if (!folderStats.isDirectory()) throw new CommandError(`--out ${path}: ${folder} is not a folder`);
  if (!mayCreateFilesIn(folder)) throw new CommandError(`--out ${path}: this user may not create files in ${folder}`);
}

/** The data folder an import writes into must exist: a mistyped --data-dir must not grow a new folder tree that nothing reads. */
function checkDataDir(path: string): void {
  const stats = statOrNull(path);
  if (!stats) throw new CommandError(`${path} does not exist: check --data-dir (seclookup data init makes a data folder)`);
  if (!stats.isDirectory()) throw new CommandError(`--data-dir ${path} is not a folder`);
}

/** `--tmp-dir DIR`: an existing folder this user may write; never created (a mistyped one would be made anywhere, and left behind). */
function checkTmpDir(path: string): void {
  const stats = statOrNull(path);
  if (!stats) throw new CommandError(`--tmp-dir ${path} does not exist: give an existing folder`);
  if (!stats.isDirectory()) throw new CommandError(`--tmp-dir ${path} is not a folder`);
  if (!mayCreateFilesIn(path)) throw new CommandError(`--tmp-dir ${path}: this user may not create files there`);
}

/** An error's message without the `seclookup: ` some library messages start with (the CLI adds its own). */
function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^seclookup: /, '');
}

/**
 * The folder `update` and `import` write: the one given, else the bundled data, except when that
 * lies under node_modules (an installed package), where the next `npm install` would undo it.
 */
export function writableDataDir(given: string | undefined, command: string, bundled = bundledDataDir()): string {
  const dataDir = resolveDataDir(given);
  if (dataDir) return dataDir;
  if (bundled.split(sep).includes('node_modules')) {
    throw new UsageError(
      `give --data-dir DIR (or $SECLOOKUP_DATA_DIR): the bundled data is inside node_modules, where a reinstall would undo the ${command.split(' ')[1]}; \`seclookup data init DIR\` copies it there first`,
      command,
    );
  }
  return bundled;
}

/** `data init DIR`: the bundled datasets, copied whole into a new or empty folder. */
async function init(argv: string[]): Promise<number> {
  const command = 'data init';
  const { values, positionals } = parseCommand(argv, {}, command);
  if (values.help) {
    out(DATA_HELP);
    return EXIT_OK;
  }
  const [dir] = expectPositionals(positionals, ['DIR'], command);
  // An empty DIR (an unset variable) would copy into the current folder.
  if (isBlank(dir)) throw new UsageError(emptyValueMessage('DIR'), command);
  const target = cliPath(dir);
  const existing = existsSync(target) ? statSync(target) : null;
  if (existing && !existing.isDirectory()) throw new CommandError(`${target} is a file: data init copies into a new or empty folder`);
  if (existing && readdirSync(target).length > 0) {
    throw new CommandError(`${target} is not empty: data init copies into a new or empty folder (to refresh a data folder, use data update)`);
  }
  let copied: { files: number; bytes: number };
  try {
    copied = copyIntoPlace(bundledDataDir(), target);
  } catch (error) {
    throw new CommandError(`cannot copy the bundled data to ${target}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const { files, bytes } = copied;
  out(`copied ${files} files (${formatSize(bytes)}) of bundled data to ${target}`);
  const shown = shellWord(dir);
  note(`next: seclookup serve --data-dir ${shown}   (or SECLOOKUP_DATA_DIR=${shown})`);
  note(`refresh a dataset there: seclookup data update PRODUCT --data-dir ${shown}`);
  return EXIT_OK;
}

/**
 * Copy `source` into a temporary folder beside `target`, then rename it into place (over an
 * empty `target`): a copy that fails half-way (a full disk) leaves no half-filled `target`, so
 * running the command again works. The temporary folder is removed on failure.
 */
function copyIntoPlace(source: string, target: string): { files: number; bytes: number } {
  const parent = dirname(target);
  mkdirSync(parent, { recursive: true });
  const temporary = join(parent, `.${basename(target)}.init-${process.pid}-${randomBytes(4).toString('hex')}`);
  let files = 0;
  let bytes = 0;
  try {
    cpSync(source, temporary, {
      recursive: true,
      // The data's own times: doctor and the dataset-age metric tell how old the data is, not when it was copied.
      preserveTimestamps: true,
      // Indexes an earlier run compiled beside the data (riskscore's *.idx) are rebuilt where they are needed.
      filter: (path) => {
        if (GENERATED.test(basename(path))) return false;
        const stats = statSync(path);
        if (stats.isFile()) {
          files += 1;
          bytes += stats.size;
        }
        return true;
      },
    });
    // An empty folder the operator made keeps its permissions.
    const existing = statOrNull(target);
    if (existing) chmodSync(temporary, existing.mode & 0o7777);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw error;
  }
  return { files, bytes };
}

/** Files engines compile from the data at run time, never copied. */
const GENERATED = /\.(idx|tmp|lock)$|^seclookup-/;

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

/** `--mirror`: an http(s) URL. Quoted back without its userinfo (a password), whether it parses or not. */
function assertHttpUrl(value: string, command: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // shown below
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new UsageError(`--mirror must be an http(s) URL (got ${JSON.stringify(redactUserinfo(value))})`, command);
  // Each feed's host and path are appended to the mirror URL: after a query (a token, often) or a
  // fragment they would land inside it, so every feed would 404 while the query (quoted back in
  // progress lines) leaked. Refused without quoting it.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(value))
    throw new UsageError(
      `--mirror must not have a query or fragment (${JSON.stringify(redactUserinfo(`${url.origin}${url.pathname}`))} then ?... or #...): each feed's host and path are appended to it; give a token in the URL's user part (https://TOKEN@mirror/) instead`,
      command,
    );
}
