/** The browser tests find Chromium by environment variable or on PATH, not at one fixed path. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findChromium, requireChromium } from './chromium.js';

const dir = mkdtempSync(join(tmpdir(), 'seclookup-chromium-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function executable(folder: string, name: string): string {
  const path = join(folder, name);
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
  return path;
}

describe('findChromium', () => {
  const bin = join(dir, 'bin');
  const other = join(dir, 'other');

  it('takes $SECLOOKUP_CHROMIUM, then $CHROMIUM_PATH, before PATH', () => {
    expect(findChromium({ SECLOOKUP_CHROMIUM: '/opt/a/chrome', CHROMIUM_PATH: '/opt/b/chrome', PATH: '/usr/bin' })).toBe('/opt/a/chrome');
    expect(findChromium({ CHROMIUM_PATH: '/opt/b/chrome', PATH: '/usr/bin' })).toBe('/opt/b/chrome');
  });

  it('finds an executable chromium (or chromium-browser, google-chrome) on PATH, first folder first', () => {
    makeFolders(bin, other);
    const inOther = executable(other, 'chromium-browser');
    expect(findChromium({ PATH: `${join(dir, 'none')}:${other}` })).toBe(inOther);
    const inBin = executable(bin, 'chromium');
    expect(findChromium({ PATH: `${bin}:${other}` })).toBe(inBin);
    // A file that is not executable is not a browser.
    writeFileSync(join(dir, 'chromium'), 'not a program');
    expect(findChromium({ PATH: dir })).toBeUndefined();
  });

  it('says how to provide one when there is none', () => {
    expect(() => requireChromium({ PATH: join(dir, 'none') })).toThrow(/on PATH .*\$SECLOOKUP_CHROMIUM or \$CHROMIUM_PATH/);
    expect(() => requireChromium({ SECLOOKUP_CHROMIUM: join(dir, 'missing') })).toThrow(/from \$SECLOOKUP_CHROMIUM\) is not an executable file/);
  });
});

function makeFolders(...folders: string[]): void {
  for (const folder of folders) mkdirSync(folder, { recursive: true });
}
