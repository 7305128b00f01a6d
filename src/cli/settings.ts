/**
 * Engine settings on the command line: each product may declare flags (`--geoip-db FILE`)
 * that set its engine options for `serve` and `lookup`, each with an environment variable
 * fallback (`$SECLOOKUP_GEOIP_DB`), so a container can be configured without flags.
 */
import { envName } from './args.js';
import type { AnyProductModule, ProductSetting } from '../products/module.js';
import { UsageError } from './errors.js';
import { cliEnv } from './io.js';
import { wrapHelp } from './output.js';

interface DeclaredSetting {
  product: string;
  flag: string;
  env: string;
  setting: ProductSetting<unknown>;
}

/** The settings the modules declare, in module order. */
function declared(modules: readonly AnyProductModule[]): DeclaredSetting[] {
  return modules.flatMap((module) =>
    Object.entries(module.cli.settings ?? {}).map(([flag, setting]) => ({
      product: module.id,
      flag,
      env: envName(flag),
      setting: setting as ProductSetting<unknown>,
    })),
  );
}

/** parseArgs specs for the modules' setting flags. */
export function settingOptions(modules: readonly AnyProductModule[]): Readonly<Record<string, { type: 'string' }>> {
  return Object.fromEntries(declared(modules).map((d) => [d.flag, { type: 'string' as const }]));
}

/** Help lines for the modules' settings (each ending in a newline; empty when none), text at column `width`. */
export function settingsHelp(modules: readonly AnyProductModule[], width: number): string {
  return declared(modules)
    .map((d) => {
      const flag = `--${d.flag} VALUE`;
      const text = `${d.setting.help} ($${d.env})`;
      // A flag too long for the column (two spaces at least before its text) gets its text on the next line.
      const start = flag.length < width - 3 ? `  ${flag.padEnd(width - 2)}` : `  ${flag}\n${' '.repeat(width)}`;
      return `${wrapHelp(start, text, width)}\n`;
    })
    .join('');
}

/**
 * The per-product engine options the settings give: flag first, then the environment. A value
 * the product refuses is a UsageError naming the flag (or variable) and the problem.
 */
export function engineOptionsFrom(
  modules: readonly AnyProductModule[],
  values: Readonly<Record<string, unknown>>,
  command: string,
  env: Readonly<Record<string, string | undefined>> = cliEnv(),
): Record<string, object> {
  const options: Record<string, object> = {};
  for (const { product, flag, env: variable, setting } of declared(modules)) {
    const fromFlag = values[flag];
    const value = typeof fromFlag === 'string' ? fromFlag : env[variable] || undefined;
    if (value === undefined) continue;
    try {
      options[product] = { ...options[product], ...setting.apply(value) };
    } catch (error) {
      const source = typeof fromFlag === 'string' ? `--${flag}` : `$${variable}`;
      throw new UsageError(`${source}: ${error instanceof Error ? error.message : String(error)}`, command);
    }
  }
  return options;
}

/**
 * Refuse a config file that sets one engine option twice: by a flat setting (`"geoip-db"`) and
 * in its `"products"` section (`"products": { "geoip": { "database": ... } }`). Within one file
 * neither is the more specific, and the flat one would win without a word.
 */
export function checkFileSettingsAgree(
  modules: readonly AnyProductModule[],
  flat: Readonly<Record<string, unknown>>,
  products: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  path: string,
  command: string,
): void {
  for (const { product, flag, setting } of declared(modules)) {
    const value = flat[flag];
    const section = products[product];
    if (typeof value !== 'string' || section === undefined) continue;
    let applied: object;
    try {
      applied = setting.apply(value) as object;
    } catch {
      continue; // a bad value is refused where the setting is read, naming it
    }
    const twice = Object.keys(applied).find((option) => Object.hasOwn(section, option));
    if (twice !== undefined)
      throw new UsageError(`--config ${path}: "${flag}" and "products.${product}.${twice}" both set ${product}'s ${twice}; keep one`, command);
  }
}
