/**
 * The `seclookup` command: picks the command group and maps errors to exit codes
 * (0 ok, 1 failed, 2 usage error). Each group lives in its own module; bin.ts is the executable.
 */
import { packageVersion } from '../lib/datasets.js';
import { redactUserinfo } from '../lib/redact-url.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { note, out } from './output.js';
import { withIo, type CliIo } from './io.js';
import type { ProductDescriptor } from '../products/descriptor.js';
import { PRODUCT_DESCRIPTORS } from '../products/descriptors.js';

/** A command: takes the arguments after its name, resolves with the exit code. */
export type Command = (argv: string[]) => Promise<number>;

/** One command of `seclookup`: its lines in the main help (usage, summary) and its code, loaded on demand. */
interface CommandEntry {
  help: readonly (readonly [usage: string, summary: string])[];
  load: () => Promise<Command>;
}

// Loaded on demand: `keys list` need not load the HTTP stack or the User-Agent parser.
// One entry per command; a product's own commands (captcha's sitekeys) come from its descriptor.
const CORE_COMMANDS: Record<string, CommandEntry> = {
  serve: {
    help: [['serve', 'run the HTTP API (first start prints a starter key per product)']],
    load: async () => {
      // Before its modules load (most of a second): a SIGTERM from then on stops serve cleanly (exit 0) instead of killing it.
      (await import('./shutdown.js')).catchStopSignals();
      return (await import('./serve.js')).runServe;
    },
  },
  keys: { help: [['keys create|list|update|revoke', 'manage API keys']], load: async () => (await import('./keys.js')).runKeys },
  plans: { help: [['plans set|list', 'manage plans (per-minute rate limit, monthly quota)']], load: async () => (await import('./plans.js')).runPlans },
  usage: { help: [['usage', 'billed lookups per subscription and product, for a month']], load: async () => (await import('./usage.js')).runUsage },
  lookup: {
    help: [['lookup PRODUCT INPUT', 'run one lookup in this process and print the JSON result']],
    load: async () => (await import('./lookup.js')).runLookup,
  },
  data: {
    help: [
      ['data init DIR', 'copy the bundled datasets into DIR (then use --data-dir DIR)'],
      ['data update PRODUCT', 'refresh a dataset from its sources (seclookup data --help lists them)'],
      ['data import PRODUCT FILE...', 'build a dataset from files you have (pwbreach: Pwned Passwords)'],
    ],
    load: async () => (await import('./data.js')).runData,
  },
  doctor: {
    help: [['doctor', 'say, per product, whether it can answer here and why not']],
    load: async () => (await import('./doctor.js')).runDoctor,
  },
  openapi: {
    help: [['openapi', 'print the OpenAPI 3.1 document of the API (as served at /v1/openapi.json)']],
    load: async () => (await import('./openapi.js')).runOpenApi,
  },
};

const PRODUCT_COMMANDS: Record<string, CommandEntry> = Object.fromEntries(
  (PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).flatMap((descriptor) =>
    Object.entries(descriptor.commands ?? {}).map(([name, command]) => [name, { help: [[command.usage, command.summary]], load: command.load }]),
  ),
);

/** Every command by name: the core ones, then the products' own. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = { ...CORE_COMMANDS, ...PRODUCT_COMMANDS };

/** The help's command lines: usage in a 20-column field, a longer usage on its own line. */
function commandLines(): string {
  return Object.values(COMMANDS)
    .flatMap((command) => command.help)
    .map(([usage, summary]) => (usage.length <= 20 ? `  ${usage.padEnd(22)}${summary}` : `  ${usage}\n${' '.repeat(24)}${summary}`))
    .join('\n');
}

const MAIN_HELP = `seclookup: security lookups (User-Agent, webhook source IPs, ...) as a self-hosted API.

Usage: seclookup <command> [options]

Commands:
${commandLines()}

Options:
  -h, --help            show help; \`seclookup <command> --help\` for a command's options
  -V, --version         print the version

Environment:
  SECLOOKUP_DB          metering database when --db is not given (else ./seclookup.db)
  SECLOOKUP_DATA_DIR    dataset folder when --data-dir is not given (else the bundled data)
  SECLOOKUP_PORT, PORT  serve's port when --port is not given, in this order (else 8080)

Exit codes: 0 success, 1 the command failed, 2 usage error (bad command line).

Quick start:
  seclookup serve                          # prints keys once, listens on 127.0.0.1:8080
  curl -H "Authorization: Bearer ua_sec_..." "http://127.0.0.1:8080/v1/useragent/lookup?ua=curl/8.5"`;

/**
 * Run `seclookup ARGV...` with `io` (the process's own when not given): resolves with the exit
 * code, never exits the process. The tests run the CLI in process this way.
 */
export function main(argv: readonly string[], io?: CliIo): Promise<number> {
  // The command being run, once known: a usage error that names no command's help points at this one's.
  const running = { command: '' };
  const run = async () => {
    try {
      return await dispatch([...argv], running);
    } catch (error) {
      return report(error, running.command);
    }
  };
  // Without an io (the binary), cliIo() answers the process's own already: no AsyncLocalStorage,
  // whose promise hooks would tax every promise `serve` makes for as long as it runs.
  return io === undefined ? run() : withIo(io, run);
}

async function dispatch(argv: string[], running: { command: string }): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    out(MAIN_HELP);
    return EXIT_OK;
  }
  if (command === '-V' || command === '--version') {
    out(packageVersion());
    return EXIT_OK;
  }
  const entry = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!entry) {
    const what = command.startsWith('-') ? `unknown option ${command}` : `unknown command ${JSON.stringify(command)}`;
    throw new UsageError(`${what}; commands are: ${Object.keys(COMMANDS).join(', ')}`);
  }
  running.command = command;
  const run = await entry.load();
  return run(rest);
}

/** A whole secret key of any product: its prefix and 16 or more key characters (a visible prefix, `ua_sec_3kT9xQ`, has 6). */
const SECRET_KEY_TEXT = new RegExp(`(?:${(PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).map((d) => d.secretPrefix).join('|')})[A-Za-z0-9_-]{16,}`, 'g');

/** `text` with every whole secret key in it replaced: the last guard of every message printed for an error (a key pasted where a flag goes). */
function redactSecretKeys(text: string): string {
  return text.replace(SECRET_KEY_TEXT, '(a secret key)');
}

/**
 * The error in one line (a stack only when unexpected). Whatever quoted a URL (a product refusing
 * its `--riskscore-url`, an engine failing to reach its upstream) prints it without a password,
 * and whatever quoted a secret key given on the command line prints it as "(a secret key)".
 */
function report(error: unknown, command: string): number {
  if (error instanceof UsageError) {
    // `keys create` has its help under `keys --help`.
    const helpFor = (error.helpFor || command).split(' ')[0];
    note(`seclookup: ${redactSecretKeys(redactUserinfo(error.message))}`);
    note(`Run \`seclookup ${helpFor ? `${helpFor} ` : ''}--help\` for usage.`);
    return EXIT_USAGE;
  }
  if (error instanceof CommandError) {
    note(`seclookup: ${redactSecretKeys(redactUserinfo(error.message))}`);
    return EXIT_FAILURE;
  }
  // Not expected: show the stack so the problem can be reported.
  note(`seclookup: unexpected error: ${redactSecretKeys(redactUserinfo(error instanceof Error ? (error.stack ?? error.message) : String(error)))}`);
  return EXIT_FAILURE;
}
