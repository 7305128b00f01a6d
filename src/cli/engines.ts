import { createLookup, type Lookup } from '../lookup.js';
import { CommandError } from './errors.js';

/**
 * Build the lookup engines for a command. Datasets load here, so a missing or corrupt data
 * folder is reported before any port opens or any lookup runs.
 */
export function loadEngines(dataDir: string | undefined): Lookup {
  try {
    return createLookup({ dataDir });
  } catch (error) {
    throw new CommandError(`cannot load the lookup engines: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
