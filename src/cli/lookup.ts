/**
 * `seclookup lookup PRODUCT INPUT`: run one lookup in process, without a server or a key.
 * Handy for checking a dataset or an input before wiring up the API. The products, their
 * INPUT and their flags come from the product registry.
 */
import { isLookupError } from '../errors.js';
import { isProductId, PRODUCT_IDS } from '../products/catalog.js';
import type { AnyProductModule } from '../products/module.js';
import { BUILT_PRODUCT_IDS, isBuiltProduct, PRODUCT_MODULES, productModule } from '../products/registry.js';
import { ALLOW_PRIVATE_TARGETS_HELP, ENGINE_OPTIONS, loadEngines, lookupOptionsFrom } from './engines.js';
import { expectPositionals, parseCommand } from './args.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out, printJson } from './output.js';
import { settingsHelp } from './settings.js';

const MODULES = PRODUCT_MODULES as readonly AnyProductModule[];
const BUILT = BUILT_PRODUCT_IDS.join(', ');

/** Every product flag, for parseArgs; each product accepts only its own. */
const PRODUCT_FLAGS = Object.fromEntries(MODULES.flatMap((module) => Object.keys(module.cli.flags ?? {})).map((flag) => [flag, { type: 'string' as const }]));

function flagHelp(): string {
  const lines = MODULES.flatMap((module) =>
    Object.entries(module.cli.flags ?? {}).map(([flag, help]) => `  ${`--${flag} VALUE`.padEnd(20)}${module.id} only: ${help}`),
  );
  return lines.join('\n');
}

export const LOOKUP_HELP = `Usage:
  seclookup lookup PRODUCT INPUT [product flags] [--data-dir DIR] [--dns HOST:PORT]

Run one lookup in this process (no server, no key, no quota) and print the result as
JSON on stdout. Products available: ${BUILT}.

${MODULES.map((module) => `  ${module.id.padEnd(20)}INPUT is ${module.cli.input}`).join('\n')}
${flagHelp()}
${settingsHelp(22)}  --data-dir DIR      dataset folder (default: $SECLOOKUP_DATA_DIR, else the data
                      bundled with seclookup)
  --dns HOST:PORT     DNS server for the DNS-using products (repeatable or
                      comma-separated; default: the system's, from /etc/resolv.conf)
  --allow-private-targets CIDR,...
                      ${ALLOW_PRIVATE_TARGETS_HELP.replace(/\n/g, '\n                      ')}
  -h, --help          show this help

An INPUT that starts with '-' goes after '--':  seclookup lookup useragent -- "-weird-agent"

Examples:
${MODULES.map((module) => `  seclookup lookup ${module.id} ${module.cli.example}`).join('\n')}

Exit codes: 0 result printed, 1 lookup error (printed as {"error_code", "error"} JSON
            on stderr, e.g. invalid_ip or ip_not_routable), 2 usage error (unknown or
            unbuilt product, missing INPUT, unknown option).`;

export async function runLookup(argv: string[]): Promise<number> {
  const command = 'lookup';
  const { values, positionals } = parseCommand(argv, { ...PRODUCT_FLAGS, ...ENGINE_OPTIONS }, command);
  if (values.help) {
    out(LOOKUP_HELP);
    return EXIT_OK;
  }
  const [productName, input] = expectPositionals(positionals, ['PRODUCT', 'INPUT'], command);
  const module = moduleFor(productName, command);
  const flags = values as Record<string, string | undefined>;
  for (const flag of Object.keys(PRODUCT_FLAGS)) {
    if (flags[flag] !== undefined && !(module.cli.flags && flag in module.cli.flags)) {
      throw new UsageError(
        `--${flag} applies to ${MODULES.filter((m) => m.cli.flags && flag in m.cli.flags)
          .map((m) => m.id)
          .join(', ')} only`,
        command,
      );
    }
  }

  // Only this product's engine is built: another product's missing data does not matter here.
  const lookup = loadEngines(lookupOptionsFrom(values, command), [module.id as never]);
  const call = lookup[module.id as keyof typeof lookup] as (...args: unknown[]) => Promise<object>;
  try {
    printJson(await call(...module.cli.args(input, flags)));
    return EXIT_OK;
  } catch (error) {
    if (!isLookupError(error)) throw error;
    note(JSON.stringify({ error_code: error.code, error: error.message }));
    return EXIT_FAILURE;
  }
}

function moduleFor(productName: string, command: string): AnyProductModule {
  if (!isProductId(productName)) {
    throw new UsageError(`unknown product ${JSON.stringify(productName)}; products are: ${PRODUCT_IDS.join(', ')}`, command);
  }
  if (!isBuiltProduct(productName))
    throw new UsageError(`product ${productName} is not a lookup (see \`seclookup sitekeys --help\`); lookups: ${BUILT}`, command);
  return productModule(productName)!;
}
