import type { Lookup, LookupOptions } from '../lookup.js';
import { createLookupOf } from '../lookup-of.js';
import type { AnyProductModule } from '../products/module.js';
import type { BuiltProductId } from '../products/registry.js';
import { DATA_DIR_OPTION, DNS_OPTION, envName, parseCidrList, parseDnsServers, resolveDataDir } from './args.js';
import { isSeclookupError } from '../errors.js';
import { CommandError, UsageError } from './errors.js';
import { note } from './output.js';
import { engineOptionsFrom, settingOptions } from './settings.js';

/** The flags of every command that builds lookup engines (`serve`, `lookup`), the modules' settings aside. */
export const ENGINE_OPTIONS = {
  ...DATA_DIR_OPTION,
  ...DNS_OPTION,
  'allow-private-targets': { type: 'string', multiple: true },
} as const;

/** ENGINE_OPTIONS and the settings of `modules` (`--geoip-db`). */
export function engineOptions(modules: readonly AnyProductModule[]) {
  return { ...ENGINE_OPTIONS, ...settingOptions(modules) };
}

/** Help lines for ENGINE_OPTIONS' shared flags, in the column layout of the commands' help. */
export const ALLOW_PRIVATE_TARGETS_HELP = `DANGEROUS: let tls and whois connect to these non-public
CIDRs (for lookups of your own hosts; by default no private,
loopback or reserved target is ever connected to)`;

/** createLookup options from those flags (and their environment fallbacks). */
export function lookupOptionsFrom(modules: readonly AnyProductModule[], values: Readonly<Record<string, unknown>>, command: string): LookupOptions {
  const dnsServers = parseDnsServers(values.dns as string[] | undefined, command);
  const allowPrivateTargets = parseCidrList(values['allow-private-targets'] as string[] | undefined, '--allow-private-targets', command);
  return {
    ...engineOptionsFrom(modules, values, command),
    dataDir: resolveDataDir(values['data-dir'] as string | undefined),
    dns: dnsServers ? { servers: dnsServers } : undefined,
    outbound: allowPrivateTargets.length > 0 ? { allowPrivateTargets } : undefined,
  };
}

/**
 * Each product's options checked as `createLookup` checks them (types, ranges, URLs, a provider
 * without its key), before any engine is built: a value the product refuses is a usage error
 * (exit 2) naming where the product's settings come from, not a failure to load the engines.
 */
export function checkProductOptions(
  modules: readonly AnyProductModule[],
  options: LookupOptions,
  command: string,
  { configFile = true }: { configFile?: boolean } = {},
): void {
  for (const module of modules) {
    const given = (options as Record<string, unknown>)[module.id];
    if (given === undefined || given === null || typeof given !== 'object' || !module.checkOptions) continue;
    try {
      module.checkOptions(given as Readonly<Record<string, unknown>>);
    } catch (error) {
      // Flags and variables only for a product that has them (`--geoip-db`); the config file's section for serve.
      const sources = [
        ...(module.cli.settings ? [`--${module.id}-*`, `$${envName(`${module.id}-*`)}`] : []),
        ...(configFile ? [`the config file's "products".${module.id}`] : []),
      ];
      const where =
        sources.length > 1 ? ` (from ${sources.slice(0, -1).join(', ')} or ${sources.at(-1)})` : sources.length === 1 ? ` (from ${sources[0]})` : '';
      throw new UsageError(`${tidyEngineLine(error instanceof Error ? error.message : String(error))}${where}`, command);
    }
  }
}

/**
 * Build the lookup engines for a command: all of them (`serve`, so a missing or corrupt data
 * folder is reported before the port opens), or only the ones named (`lookup`, which needs
 * one product's data and no other's).
 */
export function loadEngines(modules: readonly AnyProductModule[], options: LookupOptions, products?: readonly BuiltProductId[]): Lookup {
  let lookup: Lookup;
  try {
    lookup = createLookupOf(modules, options);
    lookup.load(products);
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split('\n').map(tidyEngineLine);
    // One line per product, so a data folder missing several datasets reads as a list.
    const lines = message.length > 1 ? `\n  ${message.join('\n  ')}` : ` ${message[0]}`;
    // A folder missing datasets may just be new; a dataset that is there but refused is another matter.
    const hint =
      options.dataDir && isSeclookupError(error, 'dataset_missing')
        ? `\nTo fill a data folder with the bundled datasets: seclookup data init ${options.dataDir}`
        : '';
    throw new CommandError(`cannot load the lookup engines:${lines}${hint}`, { cause: error });
  }
  warnAboutEngines(lookup, modules, products);
  return lookup;
}

/**
 * One product's line of a load failure without the prefixes said twice: the library's own
 * `seclookup: ` (the CLI adds its own) and a product name the engine's message repeats
 * (`geoip: geoip: cannot read ...`).
 */
export function tidyEngineLine(line: string): string {
  return line.replace(/(^|: )seclookup: /g, '$1').replace(/^([\w-]+): \1: /, '$1: ');
}

/** Each warning a built engine has of itself (pwbreach on its small sample), one line on stderr. */
function warnAboutEngines(lookup: Lookup, modules: readonly AnyProductModule[], products?: readonly BuiltProductId[]): void {
  for (const module of modules) {
    if (!module.doctor?.check || (products && !products.includes(module.id as BuiltProductId))) continue;
    for (const finding of module.doctor.check(lookup.engine(module.id as BuiltProductId) as never)) {
      if (finding.level !== 'ok') note(`seclookup: warning: ${module.id} ${finding.message}`);
    }
  }
}
