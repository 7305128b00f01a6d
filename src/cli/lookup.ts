/**
 * `seclookup lookup PRODUCT INPUT`: run one lookup in process, without a server or a key.
 * Handy for checking a dataset or an input before wiring up the API. The products, their
 * INPUT and their flags come from the product modules. Only the product asked for (and the
 * ones it needs) is loaded; the help and a mistaken command line load them all, to list them.
 */
import { existsSync } from 'node:fs';
import type { LookupOptions } from '../lookup.js';
import { isLookupError, isSeclookupError } from '../errors.js';
import { isProductId } from '../products/catalog.js';
import type { ProductDescriptor } from '../products/descriptor.js';
import { PRODUCT_DESCRIPTORS } from '../products/descriptors.js';
import { loadProductModules } from '../products/load.js';
import type { AnyProductModule } from '../products/module.js';
import { ALLOW_PRIVATE_TARGETS_HELP, checkProductOptions, engineOptions, loadEngines, lookupOptionsFrom } from './engines.js';
import { expectPositionals, parseCommand } from './args.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out, printJson, wrapHelp } from './output.js';
import { settingsHelp } from './settings.js';

/** Every module, for the help and for mistakes: loaded only then. */
async function allModules(): Promise<readonly AnyProductModule[]> {
  return (await import('../products/registry.js')).PRODUCT_MODULES as readonly AnyProductModule[];
}

/**
 * The modules' product flags, for parseArgs; each product accepts only its own. Repeatable: a
 * flag given twice (`--provider github --provider stripe`) means its values joined with commas,
 * as the list flags take them, rather than only the last one.
 */
function productFlags(modules: readonly AnyProductModule[]) {
  return Object.fromEntries(
    modules.flatMap((module) => Object.keys(module.cli.flags ?? {})).map((flag) => [flag, { type: 'string' as const, multiple: true as const }]),
  );
}

/**
 * The engine arguments from INPUT and the flags; INPUT `-` unreadable (stdin a folder, closed) is
 * said in one line, and a product flag its product refuses (`--type`, `--port`) is a usage error.
 */
function cliArgs(module: AnyProductModule, input: string, values: Readonly<Record<string, unknown>>, command: string): unknown[] {
  try {
    return module.cli.args(input, productFlagValues(module, values));
  } catch (error) {
    if (isSeclookupError(error, 'invalid_option')) throw new UsageError(error.message, command);
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (typeof code === 'string' && code.startsWith('E')) throw new CommandError(`cannot read the input: ${(error as Error).message}`, { cause: error });
    throw error;
  }
}

/** The product's flags as its `cli.args` reads them: each one's values joined with commas. */
function productFlagValues(module: AnyProductModule, values: Readonly<Record<string, unknown>>): Record<string, string | undefined> {
  const flags: Record<string, string | undefined> = {};
  for (const flag of Object.keys(module.cli.flags ?? {})) {
    const given = values[flag];
    flags[flag] = Array.isArray(given) ? given.join(',') : (given as string | undefined);
  }
  return flags;
}

function flagHelp(modules: readonly AnyProductModule[]): string {
  const lines = modules.flatMap((module) =>
    Object.entries(module.cli.flags ?? {}).map(([flag, help]) => wrapHelp(`  ${`--${flag} VALUE`.padEnd(20)}`, `${module.id} only: ${help}`, 22)),
  );
  return lines.join('\n');
}

/** The help, listing every product. */
export function lookupHelp(modules: readonly AnyProductModule[]): string {
  const built = modules.map((module) => module.id).join(', ');
  return `Usage:
  seclookup lookup PRODUCT INPUT [product flags] [--data-dir DIR] [--dns HOST:PORT]

${wrapHelp('', `Run one lookup in this process (no server, no key, no quota) and print the result as JSON on stdout. Products available: ${built}.`, 0)}

${modules.map((module) => wrapHelp(`  ${module.id.padEnd(20)}`, `INPUT is ${module.cli.input}`, 22)).join('\n')}
${flagHelp(modules)}
                      (a product flag given twice: its values joined with commas)
${settingsHelp(modules, 22)}  --data-dir DIR      dataset folder (default: $SECLOOKUP_DATA_DIR, else the data
                      bundled with seclookup)
  --dns HOST:PORT     DNS server for the DNS-using products (repeatable or
                      comma-separated; default: the system's, from /etc/resolv.conf)
  --allow-private-targets CIDR,...
                      ${ALLOW_PRIVATE_TARGETS_HELP.replace(/\n/g, '\n                      ')}
  -h, --help          show this help

An INPUT that starts with '-' goes after '--':  seclookup lookup useragent -- "-weird-agent"

Examples:
${modules.map((module) => `  seclookup lookup ${module.id} ${module.cli.example}`).join('\n')}

Exit codes: 0 result printed, 1 lookup error (printed as {"error_code", "error"} JSON
            on stderr, e.g. invalid_ip or ip_not_routable), 2 usage error (unknown or
            unbuilt product, missing INPUT, unknown option, a bad --type or --port, a
            setting the product refuses).`;
}

/**
 * The PRODUCT argument, read before the flags are known: every flag of `lookup` but --help
 * takes a value, so the first word that is neither a flag nor a flag's value is PRODUCT.
 * Undefined when the help is asked for or there is no product.
 */
function productArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return undefined;
    if (arg === '--') return argv[i + 1];
    if (!arg.startsWith('-')) return arg;
    if (!arg.includes('=')) i++;
  }
  return undefined;
}

export async function runLookup(argv: string[]): Promise<number> {
  const command = 'lookup';
  const asked = productArgument(argv);
  if (asked !== undefined && isProductId(asked)) {
    const modules = await loadProductModules([asked]);
    const module = modules.find((candidate) => candidate.id === asked);
    if (module) {
      // A flag this product does not take is a mistake the full path explains (`--port applies to tls only`).
      const parsed = tryParse(argv, { ...productFlags([module]), ...engineOptions(modules) }, command);
      if (parsed && !parsed.values.help) return lookupWith(modules, module, parsed.values, parsed.positionals, command);
    }
  }
  return runWithEveryModule(argv, command);
}

function tryParse(argv: string[], options: Parameters<typeof parseCommand>[1], command: string): ReturnType<typeof parseCommand> | undefined {
  try {
    return parseCommand(argv, options, command);
  } catch (error) {
    if (error instanceof UsageError) return undefined;
    throw error;
  }
}

/** The command with every product's module loaded: the help, and every mistake's message. */
async function runWithEveryModule(argv: string[], command: string): Promise<number> {
  const modules = await allModules();
  const flagSpecs = productFlags(modules);
  const { values, positionals } = parseCommand(argv, { ...flagSpecs, ...engineOptions(modules) }, command);
  if (values.help) {
    out(lookupHelp(modules));
    return EXIT_OK;
  }
  const [productName] = expectPositionals(positionals, ['PRODUCT', 'INPUT'], command);
  const module = moduleFor(modules, productName, command);
  const flags = values as Record<string, string | undefined>;
  for (const flag of Object.keys(flagSpecs)) {
    if (flags[flag] !== undefined && !(module.cli.flags && flag in module.cli.flags)) {
      throw new UsageError(
        `--${flag} applies to ${modules
          .filter((m) => m.cli.flags && flag in m.cli.flags)
          .map((m) => m.id)
          .join(', ')} only`,
        command,
      );
    }
  }
  return lookupWith(modules, module, values, positionals, command);
}

/** Build `module`'s engine (only it: another product's missing data does not matter here) and print its answer. */
async function lookupWith(
  modules: readonly AnyProductModule[],
  module: AnyProductModule,
  values: Readonly<Record<string, unknown>>,
  positionals: string[],
  command: string,
): Promise<number> {
  const [, input] = expectPositionals(positionals, ['PRODUCT', 'INPUT'], command);
  const options = withOneShotOptions(modules, lookupOptionsFrom(modules, values, command));
  // A setting the product refuses (a provider without its key) is a usage error, as for serve.
  checkProductOptions(modules, options, command, { configFile: false });
  refuseMissingDbFile(module, options);
  const lookup = loadEngines(modules, options, [module.id as never]);
  const call = lookup[module.id as keyof typeof lookup] as (...args: unknown[]) => Promise<object>;
  try {
    printJson(await call(...cliArgs(module, input, values, command)));
    return EXIT_OK;
  } catch (error) {
    // A file read on first use (geoip's lazy files) that is refused: said as a load failure.
    if (isSeclookupError(error, 'dataset_invalid') || isSeclookupError(error, 'dataset_missing'))
      throw new CommandError(`cannot load the lookup engines: ${error.message}`, { cause: error });
    if (!isLookupError(error)) throw error;
    note(JSON.stringify({ error_code: error.code, error: error.message }));
    return EXIT_FAILURE;
  } finally {
    // In process (the tests, an embedding app) the engines' watches and files must not outlive the command.
    await lookup.close();
  }
}

/**
 * A product's database beside the meter (scamrisk's `reports`) that is not there: a one-shot
 * lookup only reads it, so a mistyped path is said, not made into an empty database that
 * quietly holds nothing.
 */
function refuseMissingDbFile(module: AnyProductModule, options: LookupOptions): void {
  const option = module.dbFileOption;
  const path = option ? (options as Record<string, Record<string, unknown> | undefined>)[module.id]?.[option] : undefined;
  if (typeof path === 'string' && !existsSync(path))
    throw new CommandError(`no such file ${path} (${module.id}'s ${option} database): lookup reads it, and never creates one`);
}

/** Each module's `cli.oneShot` engine options under the options from the flags (which win). */
function withOneShotOptions(modules: readonly AnyProductModule[], options: LookupOptions): LookupOptions {
  const merged: Record<string, unknown> = { ...options };
  for (const module of modules) {
    if (module.cli.oneShot) merged[module.id] = { ...module.cli.oneShot, ...(merged[module.id] as object | undefined) };
  }
  return merged as LookupOptions;
}

function moduleFor(modules: readonly AnyProductModule[], productName: string, command: string): AnyProductModule {
  if (!isProductId(productName)) {
    throw new UsageError(`unknown product ${JSON.stringify(productName)}; lookups: ${modules.map((m) => m.id).join(', ')}`, command);
  }
  const module = modules.find((candidate) => candidate.id === productName);
  if (!module) {
    const built = modules.map((m) => m.id).join(', ');
    // Its own commands are where it is used from the command line (captcha: sitekeys).
    const [own] = Object.keys((PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).find((d) => d.id === productName)?.commands ?? {});
    const see = own ? ` (see \`seclookup ${own} --help\`)` : '';
    throw new UsageError(`product ${productName} is not a lookup${see}; lookups: ${built}`, command);
  }
  return module;
}
