/**
 * `seclookup lookup PRODUCT INPUT`: run one lookup in process, without a server or a key.
 * Handy for checking a dataset or an input before wiring up the API.
 */
import { isLookupError } from '../errors.js';
import { type Lookup } from '../lookup.js';
import { isProductId, PRODUCT_IDS, type ProductId } from '../products/catalog.js';
import { loadEngines } from './engines.js';
import { DATA_DIR_OPTION, expectPositionals, parseCommand, resolveDataDir } from './args.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { note, out, printJson } from './output.js';

interface LookupFlags {
  provider?: string;
}

/** The products whose engines are built, and how the CLI calls each. */
const RUNNERS: Partial<Record<ProductId, (lookup: Lookup, input: string, flags: LookupFlags) => Promise<object>>> = {
  useragent: (lookup, input) => lookup.useragent(input),
  webhookip: (lookup, input, { provider }) => lookup.webhookip(input, { provider }),
};

const BUILT = Object.keys(RUNNERS).join(', ');

export const LOOKUP_HELP = `Usage:
  seclookup lookup PRODUCT INPUT [--provider ID[,ID...]] [--data-dir DIR]

Run one lookup in this process (no server, no key, no quota) and print the result as
JSON on stdout. Products available: ${BUILT}.

  PRODUCT             useragent: INPUT is a User-Agent string (quote it)
                      webhookip: INPUT is an IPv4 or IPv6 address
  --provider ID       webhookip only: match only these providers (e.g. github,stripe)
  --data-dir DIR      dataset folder (default: $SECLOOKUP_DATA_DIR, else the data
                      bundled with seclookup)
  -h, --help          show this help

An INPUT that starts with '-' goes after '--':  seclookup lookup useragent -- "-weird-agent"

Examples:
  seclookup lookup useragent "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
  seclookup lookup webhookip 140.82.115.10 --provider github

Exit codes: 0 result printed, 1 lookup error (printed as {"error_code", "error"} JSON
            on stderr, e.g. invalid_ip or ip_not_routable), 2 usage error (unknown or
            unbuilt product, missing INPUT, unknown option).`;

export async function runLookup(argv: string[]): Promise<number> {
  const command = 'lookup';
  const { values, positionals } = parseCommand(argv, { provider: { type: 'string' }, ...DATA_DIR_OPTION }, command);
  if (values.help) {
    out(LOOKUP_HELP);
    return EXIT_OK;
  }
  const [productName, input] = expectPositionals(positionals, ['PRODUCT', 'INPUT'], command);
  const run = runnerFor(productName, command);
  if (values.provider !== undefined && productName !== 'webhookip') {
    throw new UsageError('--provider applies to webhookip only', command);
  }

  const lookup = loadEngines(resolveDataDir(values['data-dir']));
  try {
    printJson(await run(lookup, input, { provider: values.provider }));
    return EXIT_OK;
  } catch (error) {
    if (!isLookupError(error)) throw error;
    note(JSON.stringify({ error_code: error.code, error: error.message }));
    return EXIT_FAILURE;
  }
}

function runnerFor(productName: string, command: string) {
  if (!isProductId(productName)) {
    throw new UsageError(`unknown product ${JSON.stringify(productName)}; products are: ${PRODUCT_IDS.join(', ')}`, command);
  }
  const run = RUNNERS[productName];
  if (!run) throw new UsageError(`product ${productName} has no lookup engine yet; available: ${BUILT}`, command);
  return run;
}

