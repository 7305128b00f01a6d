/**
 * Role-like local parts (`admin`, `info`, `noreply`, ...): `data/emailval/role-based-local-parts.tsv`
 * (`category<TAB>local_part`, `#` comments), from mixmaxhq/role-based-email-addresses.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeclookupError } from '../../errors.js';

export interface RoleList {
  /**
   * Is the local part role-like? Compared case-insensitively, and a `+tag` is ignored
   * (`NoReply+billing` is `noreply`).
   */
  matches(local: string): boolean;
  readonly size: number;
}

/** The list file inside a data folder. */
export function roleListPath(dataDir: string): string {
  return join(dataDir, 'emailval', 'role-based-local-parts.tsv');
}

export function createRoleList(localParts: ReadonlySet<string>): RoleList {
  return {
    size: localParts.size,
    matches(local) {
      const lower = local.toLowerCase();
      const plus = lower.indexOf('+');
      return localParts.has(plus > 0 ? lower.slice(0, plus) : lower);
    },
  };
}

const LOCAL_PART = /^[a-z0-9._+-]+$/;

/**
 * Read the TSV. Throws SeclookupError `dataset_missing` (unreadable) or `dataset_invalid`
 * (a line that is not `category<TAB>local_part` with a lower-case local part).
 */
export function loadRoleLocalParts(path: string): Set<string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parts = new Set<string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split('\t');
    if (fields.length !== 2 || !LOCAL_PART.test(fields[1])) {
      throw new SeclookupError(
        'dataset_invalid',
        `seclookup: dataset ${path} line ${index + 1}: expected "category<TAB>local_part" with a lower-case local part`,
      );
    }
    parts.add(fields[1]);
  });
  if (parts.size === 0) throw new SeclookupError('dataset_invalid', `seclookup: dataset ${path} lists no local parts`);
  return parts;
}
