/**
 * `seclookup serve --config FILE`: every serve setting in one JSON file. Its keys are serve's
 * own flag names (`"port": 8080`, `"trust-proxy": ["10.0.0.0/8"]`, `"riskscore-provider":
 * "ipinfo"`), so the file, the flags and the environment variables share one vocabulary and one
 * set of checks; plus `"products"`, each product's createLookup options (cache sizes and TTLs,
 * upstream URLs and keys). Precedence: a flag, then the file, then the environment, then the
 * default. Unknown settings and values of the wrong type are refused at start, naming the setting.
 */
import { readFileSync, statSync } from 'node:fs';
import { unknownOptionNames } from '../products/module.js';
import { BUILT_PRODUCT_IDS, productModule, type BuiltProductId } from '../products/registry.js';
import { redactUserinfo } from '../lib/redact-url.js';
import { emptyValueMessage, envName, isBlank } from './args.js';
import { UsageError } from './errors.js';
import { note } from './output.js';
import { cliEnv, cliPath } from './io.js';

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean };

/** What a config file gives serve: flag values (as parseArgs would have them) and per-product options. */
export interface ServeConfig {
  values: Record<string, string | string[]>;
  products: Record<string, Record<string, unknown>>;
}

/**
 * JSON.parse's reason without the text it quotes around the error, which may be a secret (a key,
 * a Redis URL's password): `Unexpected token 'o'`, and where it is, when the message says.
 */
function jsonErrorWithoutText(error: Error, text: string): string {
  const reason = error.message.replace(/, (\.\.\.)?"[\s\S]*"(\.\.\.)? is not valid JSON$/, '').replace(/ in JSON at position \d+.*$/s, '');
  const position = /at position (\d+)/.exec(error.message);
  if (!position) return reason;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  return `${reason} at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

/**
 * Where a settings object holds a secret: a `key` or `*-key` setting (an upstream's API key), or
 * a URL with a password (`redis://:PASS@host`, an upstream's `https://user:token@...`).
 */
function secretSettings(settings: Record<string, unknown>, prefix = ''): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      found.push(...secretSettings(value as Record<string, unknown>, `${prefix}${name}.`));
    else if (typeof value === 'string' && value !== '' && (/(^|-)key$/i.test(name) || /\/\/[^/@\s]*:[^/@\s]*@/.test(value))) found.push(`${prefix}${name}`);
  }
  return found;
}

/**
 * A config file holding a secret that every user of the machine may read is used, with a warning
 * naming the settings (as the operator secret file is; a config file is not made 0600 behind the
 * operator's back: it often lives in /etc, managed by other tools).
 */
function warnIfSecretsReadable(path: string, settings: Record<string, unknown>): void {
  let mode: number;
  try {
    mode = statSync(cliPath(path)).mode;
  } catch {
    return;
  }
  if ((mode & 0o004) === 0) return;
  const secrets = secretSettings(settings);
  if (secrets.length === 0) return;
  const shown = (mode & 0o777).toString(8).padStart(4, '0');
  note(
    `seclookup: warning: --config ${path} has mode ${shown} and holds secrets (${secrets.join(', ')}): every user of this machine may read them; make it 0600, or 0640 for the service's group`,
  );
}

/** Flags that make no sense in a file. */
const NOT_IN_FILE = new Set(['help', 'config']);

export function readServeConfig(path: string, options: Readonly<Record<string, OptionSpec>>, command: string): ServeConfig {
  let text: string;
  try {
    text = readFileSync(cliPath(path), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : redactUserinfo((error as Error).message);
    throw new UsageError(`--config ${path}: ${reason}`, command);
  }
  // A byte order mark (Notepad, PowerShell's Out-File) is no part of the JSON: JSON.parse would
  // refuse the file over an invisible character.
  text = text.replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${jsonErrorWithoutText(error as Error, text)})`, command);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`--config ${path}: the file must hold one JSON object of settings`, command);
  warnIfSecretsReadable(path, parsed as Record<string, unknown>);

  const config: ServeConfig = { values: {}, products: {} };
  for (const [name, value] of Object.entries(parsed)) {
    const where = `--config ${path}: setting "${name}"`;
    if (name === 'products') {
      config.products = readProducts(value, where, command);
      continue;
    }
    const spec = options[name];
    if (!spec || NOT_IN_FILE.has(name)) {
      throw new UsageError(
        `${where} is unknown; settings are the serve flags without "--" (${Object.keys(options)
          .filter((o) => !NOT_IN_FILE.has(o))
          .join(', ')}) and "products"`,
        command,
      );
    }
    config.values[name] = spec.multiple
      ? readList(value, where, command)
      : spec.type === 'boolean' && typeof value === 'boolean'
        ? String(value)
        : readScalar(value, where, command);
  }
  return config;
}

/**
 * Every setting's environment variable: `SECLOOKUP_` and the flag name in capitals with `_` for
 * `-` (`trust-proxy` -> `$SECLOOKUP_TRUST_PROXY`); lists are comma-separated.
 */
export function settingsFromEnv(
  options: Readonly<Record<string, OptionSpec>>,
  env: Readonly<Record<string, string | undefined>> = cliEnv(),
): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = {};
  for (const [name, spec] of Object.entries(options)) {
    if (NOT_IN_FILE.has(name)) continue;
    const text = env[envName(name)];
    if (text === undefined || text === '') continue;
    values[name] = spec.multiple ? text.split(',') : text;
  }
  return values;
}

function readScalar(value: unknown, where: string, command: string): string {
  // `"host": ""` would listen on every interface, `"db": ""` fall back to ./seclookup.db.
  if (typeof value === 'string' && isBlank(value)) throw new UsageError(emptyValueMessage(where), command);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new UsageError(`${where} must be a string or a number (got ${describe(value)})`, command);
}

function readList(value: unknown, where: string, command: string): string[] {
  const list: unknown = typeof value === 'string' ? [value] : value;
  if (Array.isArray(list) && list.every((item) => typeof item === 'string')) {
    if (list.some(isBlank)) throw new UsageError(`${where} holds an empty value`, command);
    return list;
  }
  throw new UsageError(`${where} must be an array of strings (got ${describe(value)})`, command);
}

function readProducts(value: unknown, where: string, command: string): Record<string, Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where} must be an object: product -> its options`, command);
  for (const [product, options] of Object.entries(value)) {
    if (!(BUILT_PRODUCT_IDS as readonly string[]).includes(product))
      throw new UsageError(`${where}: unknown product "${product}"; products with options: ${BUILT_PRODUCT_IDS.join(', ')}`, command);
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new UsageError(`${where}.${product} must be an object of that product's options`, command);
    const module = productModule(product as BuiltProductId)!;
    const [unknown] = unknownOptionNames(module, options);
    if (unknown !== undefined) {
      const known = Object.keys(module.optionNames);
      throw new UsageError(`${where}.${product}.${unknown} is unknown; ${product}'s options are ${known.length > 0 ? known.join(', ') : 'none'}`, command);
    }
  }
  return value as Record<string, Record<string, unknown>>;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
