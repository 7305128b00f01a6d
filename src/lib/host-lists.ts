/**
 * Host lists in JSON files that two products read: data/phishing/'s MetaMask and polkadot{.js}
 * lists are domainrep's blocklists and scamrisk's too. A file is parsed, and each list in it
 * checked and put in its ASCII form, once per process while the file is unchanged: the engine
 * built first does the work (a fifth of a second for both files), the other reuses it.
 */
import { isObject } from './blocklist-zone.js';
import { hostListProblem, readJsonDataset } from './datasets.js';
import { listEntryToAscii } from './domain.js';
import { sharedFileData } from './shared-file-data.js';

/** A list's entries as written, and each one's ASCII form as hosts are compared (null: it has none). */
export interface HostList {
  written: readonly string[];
  ascii: readonly (string | null)[];
}

/** Why a list cannot be used: it is not an array of strings, or too many entries are not host names (the problem, in words). */
export type HostListRefusal = { notStrings: true } | { problem: string };

/** A parsed list file. Shared between engines: read it, never change it. */
export interface HostListFile {
  /** The file's JSON. */
  readonly json: unknown;
  /** The list at the top-level `key`, checked: blocklists must list something, allowlists `mayBeEmpty`. */
  list(key: string, mayBeEmpty: boolean): HostList | HostListRefusal;
}

/** The file at `path`, read now or the one read before while it is unchanged. Throws what readJsonDataset throws. */
export function readHostListFile(path: string): HostListFile {
  return sharedFileData('host-list-file', [path], () => {
    const json = readJsonDataset<unknown>(path);
    const checked = new Map<string, HostList | HostListRefusal>();
    return {
      json,
      list(key, mayBeEmpty) {
        const memo = `${mayBeEmpty}:${key}`;
        let list = checked.get(memo);
        if (!list) checked.set(memo, (list = checkList(json, key, mayBeEmpty)));
        return list;
      },
    };
  });
}

function checkList(json: unknown, key: string, mayBeEmpty: boolean): HostList | HostListRefusal {
  const value = isObject(json) ? json[key] : undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) return { notStrings: true };
  const written = value as string[];
  const problem = hostListProblem(written, { mayBeEmpty });
  return problem ? { problem } : { written, ascii: written.map(listEntryToAscii) };
}

/** Whether `read` is a list rather than a refusal. */
export function isHostList(read: HostList | HostListRefusal): read is HostList {
  return 'written' in read;
}
