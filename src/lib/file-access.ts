/**
 * What this process may do with a path, asked of the file system without throwing: the checks
 * behind the one-line refusals of a `--db`, `--out` or `--tmp-dir` this user cannot use.
 */
import { accessSync, constants, realpathSync, type Stats, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** The path's stats, or null when it is absent or cannot be read. */
export function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** May this process access `path` in `mode` (`constants.R_OK | constants.W_OK`, ...)? */
export function mayAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** May this process create files in `folder` (write and search it)? */
export function mayCreateFilesIn(folder: string): boolean {
  return mayAccess(folder, constants.W_OK | constants.X_OK);
}

/** The path with every symlink followed (one name for one file, however it is reached), or resolved when it cannot be. */
export function realPathOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
