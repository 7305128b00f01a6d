import { createLookup, type Lookup, type LookupOptions } from '../lookup.js';
import type { BuiltProductId } from '../products/registry.js';
import { DATA_DIR_OPTION, DNS_OPTION, parseCidrList, parseDnsServers, resolveDataDir } from './args.js';
import { CommandError } from './errors.js';
import { engineOptionsFrom, SETTING_OPTIONS } from './settings.js';

/** The flags of every command that builds lookup engines (`serve`, `lookup`). */
export const ENGINE_OPTIONS = {
  ...DATA_DIR_OPTION,
  ...DNS_OPTION,
  'allow-private-targets': { type: 'string', multiple: true },
  ...SETTING_OPTIONS,
} as const;

/** Help lines for ENGINE_OPTIONS' shared flags, in the column layout of the commands' help. */
export const ALLOW_PRIVATE_TARGETS_HELP = `DANGEROUS: let tls and whois connect to these non-public
CIDRs (for lookups of your own hosts; by default no private,
loopback or reserved target is ever connected to)`;

/** createLookup options from those flags (and their environment fallbacks). */
export function lookupOptionsFrom(values: Readonly<Record<string, unknown>>, command: string): LookupOptions {
  const dnsServers = parseDnsServers(values.dns as string[] | undefined, command);
  const allowPrivateTargets = parseCidrList(values['allow-private-targets'] as string[] | undefined, '--allow-private-targets', command);
  return {
    ...engineOptionsFrom(values, command),
    dataDir: resolveDataDir(values['data-dir'] as string | undefined),
    dns: dnsServers ? { servers: dnsServers } : undefined,
    outbound: allowPrivateTargets.length > 0 ? { allowPrivateTargets } : undefined,
  };
}

/**
 * Build the lookup engines for a command: all of them (`serve`, so a missing or corrupt data
 * folder is reported before the port opens), or only the ones named (`lookup`, which needs
 * one product's data and no other's).
 */
export function loadEngines(options: LookupOptions, products?: readonly BuiltProductId[]): Lookup {
  try {
    const lookup = createLookup(options);
    lookup.load(products);
    return lookup;
  } catch (error) {
    throw new CommandError(`cannot load the lookup engines: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
