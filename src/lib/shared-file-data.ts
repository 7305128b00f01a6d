/**
 * Data built from files (a database's bytes, parsed lists, a compiled index), shared by every
 * engine of this process while those files are unchanged: a second `createLookup` or `createApi`,
 * `serve` started again in the same process, or two products reading the same list (domainrep
 * and scamrisk both read data/phishing/) reuse what the first one built instead of reading and
 * parsing the files again.
 *
 * A file is unchanged while its device, inode, size and modification time are: `seclookup data
 * update` replaces files by renaming new ones into place, which changes the inode; an edit in
 * place changes the time. A folder among the paths stands for its list of entries (its time
 * changes when one is added, removed or renamed).
 *
 * Held weakly: once no engine holds a value, the garbage collector may take it, and the next
 * engine builds it again. A shared value is never changed by those who use it.
 */
import { type Stats, statSync } from 'node:fs';

interface Entry {
  identity: string;
  value: WeakRef<object>;
}

const entries = new Map<string, Entry>();
/** Dead entries are swept once the map holds this many (each temporary data folder of a test run adds one). */
const SWEEP_AT = 64;

/**
 * The value `build` makes from the files at `paths`: built now, or the one built earlier in this
 * process from the same files. `kind` tells apart two values built from the same files. Whatever
 * `build` throws is thrown, and nothing is kept.
 */
export function sharedFileData<T extends object>(kind: string, paths: readonly string[], build: () => T): T {
  const key = `${kind}\0${paths.join('\0')}`;
  // Taken before the build, so a file replaced while it is read is read again next time.
  const identity = paths.map((path) => fileIdentity(path) ?? 'absent').join('|');
  const held = entries.get(key);
  const value = held?.identity === identity ? held.value.deref() : undefined;
  if (value) return value as T;
  const built = build();
  if (entries.size >= SWEEP_AT) sweep();
  entries.set(key, { identity, value: new WeakRef(built) });
  return built;
}

/** Forget every shared value, as a new process would start without them: for tests of what a start reads from disk. */
export function forgetSharedFileData(): void {
  entries.clear();
}

/** A file's device, inode, size and modification time: another text once it is replaced or changed. */
export function identityOfStats(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/** The file's identity now ({@link identityOfStats}), or null when it cannot be stat'ed. */
export function fileIdentity(path: string): string | null {
  try {
    return identityOfStats(statSync(path));
  } catch {
    return null;
  }
}

function sweep(): void {
  for (const [key, entry] of entries) if (entry.value.deref() === undefined) entries.delete(key);
}
