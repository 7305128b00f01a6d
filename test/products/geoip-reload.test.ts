/**
 * Replacing the database files under a running engine: by the file watch (atomic rename, as a
 * deployment would do it) and by reload(). New answers after a good file; the old answers kept,
 * and the failure reported, after a bad one; a lookup in flight keeps the database it started
 * with. The MaxMind City and Country test databases give different answers for the same
 * address (London with a city; GB without one), so which file answered is visible.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createLookup } from '../../src/lookup.js';
import type { GeoIpEngine } from '../../src/products/geoip/engine.js';
import type { GeoIpDatabaseInfo, GeoIpEngineOptions } from '../../src/products/geoip/types.js';
import { startDnsServer } from '../servers/dns-server.js';
import { MAXMIND } from './geoip-fixtures.js';

const temp = mkdtempSync(join(tmpdir(), 'seclookup-geoip-reload-'));
const silent = await startDnsServer({ behaviour: 'silent' });
afterAll(async () => {
  rmSync(temp, { recursive: true, force: true });
  await silent.close();
});

const engines: GeoIpEngine[] = [];
afterEach(() => {
  for (const engine of engines.splice(0)) engine.close();
});

let fileCount = 0;
/** A fresh copy of `source` under the temp folder. */
function copyOf(source: string): string {
  const path = join(temp, `geo-${++fileCount}.mmdb`);
  copyFileSync(source, path);
  return path;
}

/** Replace `path` atomically: write beside it, then rename over it. */
function replaceAtomically(path: string, content: string | Buffer | { copyOf: string }): void {
  const next = `${path}.next`;
  if (typeof content === 'object' && 'copyOf' in content) copyFileSync(content.copyOf, next);
  else writeFileSync(next, content);
  renameSync(next, path);
}

function engineOn(path: string, options: GeoIpEngineOptions = {}) {
  const lookup = createLookup({ geoip: { asn: false, database: path, ...options }, dns: { servers: [silent.address], attempts: 1 } });
  const engine = lookup.engine('geoip');
  engines.push(engine);
  return { lookup, engine };
}

describe('file watch', () => {
  it('answers from the new file after an atomic replace, and tells onReload', async () => {
    const path = copyOf(MAXMIND.city);
    const reloads: GeoIpDatabaseInfo[] = [];
    const { lookup } = engineOn(path, { watchIntervalMs: 20, onReload: (info) => reloads.push(info) });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London' });

    replaceAtomically(path, { copyOf: MAXMIND.country });
    await vi.waitFor(async () => expect((await lookup.geoip('81.2.69.142')).provider).toBe('MaxMind GeoIP2-Country'), { timeout: 10_000, interval: 20 });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ country: { code: 'GB' }, city: null });
    expect(reloads).toHaveLength(1);
    expect(reloads[0].files[0]).toMatchObject({ path, databaseType: 'GeoIP2-Country' });
    expect(lookup.engine('geoip').databaseRecords).toBe(reloads[0].records);
  });

  it('keeps answering from the old file when the new one is garbage, and tells onReloadError', async () => {
    const path = copyOf(MAXMIND.city);
    const errors: Error[] = [];
    const { lookup, engine } = engineOn(path, { watchIntervalMs: 20, onReloadError: (error) => errors.push(error) });
    replaceAtomically(path, Buffer.alloc(4096, 0x5a));
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    expect(isSeclookupError(errors[0], 'dataset_invalid') && errors[0].message).toContain(path);
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London' });
    expect(engine.info().lastReloadError).toBe(errors.at(-1));

    // A good file later is picked up, and clears the error.
    replaceAtomically(path, { copyOf: MAXMIND.country });
    await vi.waitFor(async () => expect((await lookup.geoip('81.2.69.142')).provider).toBe('MaxMind GeoIP2-Country'), { timeout: 10_000, interval: 20 });
    expect(engine.info().lastReloadError).toBeNull();
  });

  it('keeps answering, and the process alive, when onReloadError itself throws (it runs from a timer)', async () => {
    const path = copyOf(MAXMIND.city);
    let told = 0;
    const { lookup, engine } = engineOn(path, {
      watchIntervalMs: 20,
      onReloadError: () => {
        told++;
        throw new Error('the app logger is down');
      },
    });
    replaceAtomically(path, Buffer.alloc(4096, 0x5a));
    await vi.waitFor(() => expect(told).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    // An uncaught throw from the timer would fail this file's run (vitest reports it) and stop a real process.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isSeclookupError(engine.info().lastReloadError, 'dataset_invalid')).toBe(true);
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London' });
  });

  it('watches each file of a pair; only the changed one is re-read', async () => {
    const ipv4 = copyOf(MAXMIND.city);
    const ipv6 = copyOf(MAXMIND.city);
    const { lookup, engine } = engineOn('', { database: undefined, databases: { ipv4, ipv6 }, watchIntervalMs: 20 });
    const before = engine.info().files;
    replaceAtomically(ipv6, { copyOf: MAXMIND.country });
    await vi.waitFor(() => expect(engine.info().files[1].databaseType).toBe('GeoIP2-Country'), { timeout: 10_000, interval: 20 });
    // The provider is named after the IPv4 file, which did not change; IPv6 answers now come from the Country file.
    expect(await lookup.geoip('2001:218::1')).toMatchObject({ country: { code: 'JP' }, location: { latitude: null } });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ city: 'London' });
    expect(engine.info().files[0].builtAt).toEqual(before[0].builtAt);
  });
});

describe('reload()', () => {
  it('re-reads a replaced file: true when something changed, false when nothing did', async () => {
    const path = copyOf(MAXMIND.city);
    const { lookup, engine } = engineOn(path, { watch: false });
    expect(engine.reload()).toBe(false);
    replaceAtomically(path, { copyOf: MAXMIND.country });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ city: 'London' }); // no watch: not yet
    expect(engine.reload()).toBe(true);
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-Country', city: null });
    expect(engine.reload()).toBe(false);
  });

  it('throws for a bad file and keeps the database in use', async () => {
    const path = copyOf(MAXMIND.city);
    const { lookup, engine } = engineOn(path, { watch: false });
    replaceAtomically(path, 'not a database');
    let error: unknown;
    try {
      engine.reload();
    } catch (caught) {
      error = caught;
    }
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect(engine.info().lastReloadError).toBe(error);
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London' });
  });

  it('a removed file is reported (dataset_missing) and the loaded copy goes on answering', async () => {
    const path = copyOf(MAXMIND.city);
    const { lookup, engine } = engineOn(path, { watch: false });
    unlinkSync(path);
    let error: unknown;
    try {
      engine.reload();
    } catch (caught) {
      error = caught;
    }
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ city: 'London' });
  });

  it('a lookup in flight (waiting on reverse DNS) finishes with the database it started on', async () => {
    const path = copyOf(MAXMIND.city);
    const { lookup, engine } = engineOn(path, { watch: false, reverseDns: { timeoutMs: 100 } });
    const inFlight = lookup.geoip('81.2.69.142'); // the PTR goes to a silent server
    replaceAtomically(path, { copyOf: MAXMIND.country });
    expect(engine.reload()).toBe(true);
    expect(await inFlight).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London', connection: { domain: null } });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ provider: 'MaxMind GeoIP2-Country', city: null });
  });
});
