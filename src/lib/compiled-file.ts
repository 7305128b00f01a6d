/**
 * Data compiled once (a parsed CSV, a prefix table) and cached on disk, so later starts load it
 * in milliseconds instead of compiling again. Used by the asn CSV index and riskscore's lists.
 *
 * The file: 8 bytes magic, u32 LE header length, the header (JSON), zero padding to 8 bytes, then
 * the body: the caller's sections (typed arrays or bytes), each padded to 8 bytes so typed-array
 * views on the file's own buffer stay aligned.
 *   Header: format version, the machine's byte order, the stamp (what the data was built from:
 *   file paths, sizes and mtimes, package versions), the caller's meta, the section lengths, and
 *   the SHA-256 of the body.
 * A file is used only if everything matches: magic, format, byte order, stamp, lengths and
 * checksum. Anything else (stale, truncated, corrupt, from another machine) is reported and
 * rebuilt, never trusted. Writes go to a temporary name and are renamed into place, so a reader
 * (or a second process building at the same time) never sees half a file.
 *
 * Where the file goes: `dir` (the data's own folder, or one the user named). When that folder is
 * not writable, `<os.tmpdir()>/seclookup-<uid>/`, created 0700 and used only if it is a real
 * directory owned by this user that nobody else can write. When nothing is writable the data
 * lives in memory for this process only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { endianness, tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';

/** What kind of file: its magic (8 ASCII characters) and format version (bumped on any change of layout or meaning). */
export interface CompiledFileKind {
  magic: string;
  format: number;
}

/** A file's contents once checked: the caller's meta and its sections, in order. */
export interface CompiledFileContents {
  meta: unknown;
  sections: Buffer[];
}

/** How the data was obtained: read from `path`, or compiled (and written to `path`, null when nowhere could take it). */
export interface CompiledFileInfo {
  path: string | null;
  origin: 'cache' | 'compiled';
  /** Files found but not used, each with the reason. */
  rejected: string[];
}

export interface LoadCompiledOptions<T> {
  kind: CompiledFileKind;
  /** The file name (no folder). Put the format in it, so two versions side by side keep their own files. */
  name: string;
  /** The preferred folder. */
  dir: string;
  /** The last-resort folder. @default `<os.tmpdir()>/seclookup-<uid>` */
  fallbackDir?: string;
  /** What the data is built from; a file with another stamp is stale. Compared as JSON. */
  stamp: unknown;
  /** Said of a stale file. @default 'the source data changed' */
  staleReason?: string;
  compile(): T;
  encode(data: T): { meta: unknown; sections: readonly ArrayBufferView[] };
  /** The data from checked contents, or why they cannot be used. */
  decode(contents: CompiledFileContents): T | string;
}

/** The data from a valid file in `dir` (or the fallback folder), or compiled and written there. */
export function loadOrCompile<T>(options: LoadCompiledOptions<T>): { data: T; info: CompiledFileInfo } {
  const fallback = options.fallbackDir ?? defaultFallbackDir();
  const candidates: { dir: string; private: boolean }[] = [{ dir: resolve(options.dir), private: false }];
  if (resolve(fallback) !== candidates[0].dir) candidates.push({ dir: resolve(fallback), private: true });

  const rejected: string[] = [];
  for (const candidate of candidates) {
    const path = join(candidate.dir, options.name);
    if (candidate.private && !privateDirOk(candidate.dir, false)) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      continue; // none there yet (or unreadable): try the next folder, else compile
    }
    const contents = readCompiledFile(bytes, options.kind, options.stamp, options.staleReason);
    const data = typeof contents === 'string' ? contents : options.decode(contents);
    if (typeof data !== 'string') return { data, info: { path, origin: 'cache', rejected } };
    rejected.push(`${path}: ${data}`);
  }

  const data = options.compile();
  const { meta, sections } = options.encode(data);
  const bytes = serializeCompiledFile(options.kind, options.stamp, meta, sections);
  for (const candidate of candidates) {
    const path = join(candidate.dir, options.name);
    if (candidate.private ? !privateDirOk(candidate.dir, true) : !ensureDir(candidate.dir)) continue;
    if (writeAtomically(path, bytes, candidate.private ? 0o600 : 0o644)) return { data, info: { path, origin: 'compiled', rejected } };
  }
  return { data, info: { path: null, origin: 'compiled', rejected } };
}

interface Header {
  format: number;
  endianness: string;
  stamp: unknown;
  meta: unknown;
  sections: number[];
  sha256: string;
}

/** The file's bytes. */
export function serializeCompiledFile(kind: CompiledFileKind, stamp: unknown, meta: unknown, sections: readonly ArrayBufferView[]): Buffer {
  const parts: Buffer[] = [];
  for (const section of sections) {
    parts.push(Buffer.from(section.buffer, section.byteOffset, section.byteLength));
    const pad = align8(section.byteLength) - section.byteLength;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  const body = Buffer.concat(parts);
  const header: Header = {
    format: kind.format,
    endianness: endianness(),
    stamp,
    meta,
    sections: sections.map((s) => s.byteLength),
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const magic = magicBytes(kind);
  const head = Buffer.alloc(align8(magic.length + 4 + json.length));
  magic.copy(head, 0);
  head.writeUInt32LE(json.length, magic.length);
  json.copy(head, magic.length + 4);
  return Buffer.concat([head, body]);
}

/** The checked contents of a file, or why it cannot be used. */
export function readCompiledFile(
  bytes: Buffer,
  kind: CompiledFileKind,
  stamp: unknown,
  staleReason = 'the source data changed',
): CompiledFileContents | string {
  const magic = magicBytes(kind);
  if (bytes.length < magic.length + 4 || !bytes.subarray(0, magic.length).equals(magic)) return 'not an index file (bad magic)';
  const headerLength = bytes.readUInt32LE(magic.length);
  if (magic.length + 4 + headerLength > bytes.length) return 'truncated (header)';
  let header: Header;
  try {
    header = JSON.parse(bytes.toString('utf8', magic.length + 4, magic.length + 4 + headerLength)) as Header;
  } catch {
    return 'corrupt header';
  }
  if (header.format !== kind.format) return `index format ${String(header.format)}, expected ${kind.format}`;
  if (header.endianness !== endianness()) return `built on a ${String(header.endianness)} machine`;
  if (JSON.stringify(header.stamp) !== JSON.stringify(stamp)) return `stale: ${staleReason}`;
  if (!Array.isArray(header.sections) || !header.sections.every((n) => Number.isSafeInteger(n) && n >= 0)) return 'corrupt header (sections)';
  const start = align8(magic.length + 4 + headerLength);
  const length = header.sections.reduce((sum, n) => sum + align8(n), 0);
  if (bytes.length !== start + length) return `wrong length: ${bytes.length} bytes, expected ${start + length}`;
  const body = bytes.subarray(start);
  if (createHash('sha256').update(body).digest('hex') !== header.sha256) return 'checksum mismatch (corrupt file)';
  const sections: Buffer[] = [];
  let offset = 0;
  for (const n of header.sections) {
    sections.push(body.subarray(offset, offset + n));
    offset += align8(n);
  }
  return { meta: header.meta, sections };
}

/** A section as 32-bit words: a view when aligned (the usual case: the file's own buffer), else a copy. */
export function uint32Section(section: Buffer): Uint32Array {
  if (section.byteOffset % 4 === 0) return new Uint32Array(section.buffer, section.byteOffset, section.byteLength >>> 2);
  return new Uint32Array(Uint8Array.prototype.slice.call(section).buffer);
}

/** A section as 64-bit floats, viewed or copied likewise. */
export function float64Section(section: Buffer): Float64Array {
  if (section.byteOffset % 8 === 0) return new Float64Array(section.buffer, section.byteOffset, section.byteLength >>> 3);
  return new Float64Array(Uint8Array.prototype.slice.call(section).buffer);
}

/** The stamp part for one file: its path, size and mtime. Throws when it cannot be read. */
export function fileStamp(path: string): { path: string; size: number; mtimeMs: number } {
  const stats = statSync(path);
  return { path, size: stats.size, mtimeMs: stats.mtimeMs };
}

function magicBytes(kind: CompiledFileKind): Buffer {
  const magic = Buffer.from(kind.magic, 'latin1');
  if (magic.length !== 8) throw new TypeError(`compiled file magic must be 8 characters (got ${JSON.stringify(kind.magic)})`);
  return magic;
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

function defaultFallbackDir(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  return join(tmpdir(), `seclookup-${uid >= 0 ? uid : safeName(userInfo().username)}`);
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_') || 'user';
}

function ensureDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A shared temporary folder is trusted only when it is a real directory (not a symlink) owned
 * by this user and writable by nobody else; otherwise another local user could plant a file.
 */
function privateDirOk(dir: string, create: boolean): boolean {
  try {
    if (create) mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  try {
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || stats.isSymbolicLink()) return false;
    if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) return false;
    return process.platform === 'win32' || (stats.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

function writeAtomically(path: string, bytes: Buffer, mode: number): boolean {
  const temporary = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'wx', mode);
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
    return true;
  } catch {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // never created
    }
    return false;
  }
}
