#!/usr/bin/env node
/**
 * The `seclookup` command: picks the command group and maps errors to exit codes
 * (0 ok, 1 failed, 2 usage error). Each group lives in its own module.
 */
import { packageVersion } from '../lib/datasets.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { note, out } from './output.js';

type Command = (argv: string[]) => Promise<number>;

// Loaded on demand: `keys list` need not load the HTTP stack or the User-Agent parser.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).runServe,
  keys: async () => (await import('./keys.js')).runKeys,
  plans: async () => (await import('./plans.js')).runPlans,
  lookup: async () => (await import('./lookup.js')).runLookup,
  data: async () => (await import('./data.js')).runData,
  reports: async () => (await import('./reports.js')).runReports,
  sitekeys: async () => (await import('./sitekeys.js')).runSitekeys,
  openapi: async () => (await import('./openapi.js')).runOpenApi,
  doctor: async () => (await import('./doctor.js')).runDoctor,
};

const MAIN_HELP = `seclookup: security lookups (User-Agent, webhook source IPs, ...) as a self-hosted API.

Usage: seclookup <command> [options]

Commands:
  serve                 run the HTTP API (first start prints a starter key per product)
  keys create|list|revoke
                        manage API keys
  plans set|list        manage plans (per-minute rate limit, monthly quota)
  lookup PRODUCT INPUT  run one lookup in this process and print the JSON result
  doctor                say, per product, whether it can answer here and why not
  data init DIR         copy the bundled datasets into DIR (then use --data-dir DIR)
  data update PRODUCT   refresh a dataset from its sources (seclookup data --help lists them)
  data import PRODUCT FILE...
                        build a dataset from files you have (pwbreach: Pwned Passwords)
  reports add|import|dispute|list
                        scamrisk's report database (in the --db file)
  sitekeys create|list|update|revoke|rotate-signing-key
                        captcha site keys (domains, IP allowlist, managed mode)
  openapi               print the OpenAPI 3.1 document of the API (as served at /v1/openapi.json)

Options:
  -h, --help            show help; \`seclookup <command> --help\` for a command's options
  -V, --version         print the version

Environment:
  SECLOOKUP_DB          metering database when --db is not given (else ./seclookup.db)
  SECLOOKUP_DATA_DIR    dataset folder when --data-dir is not given (else the bundled data)
  PORT                  serve's port when --port is not given (else 8080)

Exit codes: 0 success, 1 the command failed, 2 usage error (bad command line).

Quick start:
  seclookup serve                          # prints keys once, listens on 127.0.0.1:8080
  curl -H "Authorization: Bearer ua_sec_..." "http://127.0.0.1:8080/v1/useragent/lookup?ua=curl/8.5"`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    out(MAIN_HELP);
    return EXIT_OK;
  }
  if (command === '-V' || command === '--version') {
    out(packageVersion());
    return EXIT_OK;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) {
    const what = command.startsWith('-') ? `unknown option ${command}` : `unknown command ${JSON.stringify(command)}`;
    throw new UsageError(`${what}; commands are: ${Object.keys(COMMANDS).join(', ')}`);
  }
  const run = await load();
  return run(rest);
}

function report(error: unknown): number {
  if (error instanceof UsageError) {
    note(`seclookup: ${error.message}`);
    note(`Run \`seclookup ${error.helpFor ? error.helpFor.split(' ')[0] + ' ' : ''}--help\` for usage.`);
    return EXIT_USAGE;
  }
  if (error instanceof CommandError) {
    note(`seclookup: ${error.message}`);
    return EXIT_FAILURE;
  }
  // Not expected: show the stack so the problem can be reported.
  note(`seclookup: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT_FAILURE;
}

// `seclookup keys list | head` closes stdout early: not worth a stack trace. For `serve`, a
// gone log reader must not stop the service either, so the remaining output is dropped.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = report(error);
  },
);
