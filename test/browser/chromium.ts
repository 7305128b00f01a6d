/**
 * Where the browser tests find Chromium: `$SECLOOKUP_CHROMIUM` or `$CHROMIUM_PATH` (a path to
 * the executable), else the first of the usual names on `$PATH` (Debian's `chromium`, which
 * .ci/run installs, Ubuntu's `chromium-browser`, Google Chrome).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The environment variables that name the executable, in the order they are read. */
export const CHROMIUM_ENV = ['SECLOOKUP_CHROMIUM', 'CHROMIUM_PATH'] as const;
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The Chromium executable, or undefined when none is named or on PATH. */
export function findChromium(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  for (const name of CHROMIUM_ENV) if (env[name]) return env[name];
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of NAMES) if (isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The executable, or an error saying how to provide one (the tests fail with it, never skip). */
export function requireChromium(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const found = findChromium(env);
  if (found === undefined) {
    throw new Error(
      `no Chromium: the captcha browser tests need one on PATH (${NAMES.join(', ')}; apt-get install chromium, as .ci/run does) or named by $${CHROMIUM_ENV.join(' or $')}`,
    );
  }
  if (!isExecutable(found)) throw new Error(`${found} (from $${CHROMIUM_ENV.find((name) => env[name])}) is not an executable file`);
  return found;
}
