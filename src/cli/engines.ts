import { createLookup, type Lookup } from '../lookup.js';
import type { BuiltProductId } from '../products/registry.js';
import { CommandError } from './errors.js';

/**
 * Build the lookup engines for a command: all of them (`serve`, so a missing or corrupt data
 * folder is reported before the port opens), or only the ones named (`lookup`, which needs
 * one product's data and no other's). `engineOptions` are per product, from the product
 * settings flags (cli/settings.ts).
 */
export function loadEngines(dataDir: string | undefined, products?: readonly BuiltProductId[], dnsServers?: string[], engineOptions: Record<string, object> = {}): Lookup {
  try {
    const lookup = createLookup({ ...engineOptions, dataDir, dns: dnsServers ? { servers: dnsServers } : undefined });
    lookup.load(products);
    return lookup;
  } catch (error) {
    throw new CommandError(`cannot load the lookup engines: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
