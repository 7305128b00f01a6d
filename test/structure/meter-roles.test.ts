/**
 * The meter split by role, and every store in one folder: code that needs one role of the Meter
 * takes that role's type only (the API's gate the hot path, the CLI's keys and plans commands
 * administration, captcha the settings store), and each store (memory, SQLite, Redis) lives in
 * its own folder under src/metering/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { MeterGateOptions } from '../../src/api/meter-gate.js';
import { createMeterGate } from '../../src/api/meter-gate.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter, MeterAdmin, MeterHotPath, SettingsStore } from '../../src/metering/types.js';
import { createOperatorSecret } from '../../src/lib/operator-secret.js';
import { rotateSigningKey, SIGNING_KEYS_SETTING } from '../../src/products/captcha/key-ring.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The names a file imports from metering/types.js. */
function meterTypesImported(path: string): string[] {
  const names: string[] = [];
  for (const match of read(path).matchAll(/import type \{([^}]*)\} from '[./]*(?:metering\/)?types\.js'/g)) {
    names.push(
      ...match[1]
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    );
  }
  return names;
}

describe('the Meter split by role', () => {
  it('a Meter is the three roles in one object', () => {
    expectTypeOf<Meter>().toExtend<MeterHotPath & MeterAdmin & SettingsStore>();
    expectTypeOf<MeterGateOptions['meter']>().toEqualTypeOf<MeterHotPath>();
  });

  it('the gate, the CLI keys and plans commands, issueKeys and every product import a role, never the whole Meter', () => {
    const roles: Record<string, string> = {
      'src/api/meter-gate.ts': 'MeterHotPath',
      'src/api/auth.ts': 'MeterHotPath',
      'src/cli/keys.ts': 'MeterAdmin',
      'src/cli/plans.ts': 'MeterAdmin',
      'src/metering/keys.ts': 'MeterAdmin',
      'src/products/captcha/key-ring.ts': 'SettingsStore',
    };
    for (const [path, role] of Object.entries(roles)) {
      expect({ path, imports: meterTypesImported(path) }).toEqual({ path, imports: expect.arrayContaining([role]) });
    }
    const wholeMeter = [...Object.keys(roles), ...sourceFiles('src/products')].filter((path) => meterTypesImported(path).includes('Meter'));
    expect(wholeMeter).toEqual([]);
  });

  it('the gate meters a request with an object that has the hot path only', async () => {
    const meter = createMemoryMeter();
    const issued = await issueKeys(meter, { product: 'useragent', plan: 'starter' });
    const hotPath: MeterHotPath = {
      resolveKey: (hash) => meter.resolveKey(hash),
      consume: (request) => meter.consume(request),
      refund: (reservation) => meter.refund(reservation),
      commit: (reservation) => meter.commit(reservation),
      quota: (subscriptionId, monthlyQuota, now) => meter.quota(subscriptionId, monthlyQuota, now),
    };
    const gate = createMeterGate({ meter: hotPath, now: () => Date.UTC(2025, 0, 15), onMeterError: 'deny', meterTimeoutMs: 60_000 });
    const pass = await gate.authenticate(issued.secretKey, 'useragent', { requireSecret: true, lenient: true }, () => null);
    const headers: Record<string, string> = {};
    const { reservation } = await gate.admit(pass, 'useragent', { reserveQuota: true, lenient: true }, headers);
    expect(reservation).not.toBeNull();
    gate.commit(reservation!);
    expect(headers['x-quota-remaining']).toBe('9999');
    expect((await meter.usage()).map((row) => row.lookups)).toEqual([1]);
  });

  it('captcha keeps its signing keys in a settings store alone', async () => {
    const settings = new Map<string, string>();
    const store: SettingsStore = {
      getSetting: async (name) => settings.get(name) ?? null,
      setSetting: async (name, value) => void settings.set(name, value),
      setSettingIfAbsent: async (name, value) => {
        if (!settings.has(name)) settings.set(name, value);
        return settings.get(name)!;
      },
    };
    const secret = createOperatorSecret('meter-roles-test-secret-0123456789abcdef');
    const { kid } = await rotateSigningKey(store, secret, Date.UTC(2025, 0, 15));
    expect([...settings.keys()]).toEqual([SIGNING_KEYS_SETTING]);
    expect(settings.get(SIGNING_KEYS_SETTING)).toContain(kid);
  });
});

describe('every store in one folder', () => {
  it('each store factory lives in src/metering/<store>/ and nothing is left in src/redis', () => {
    const factories = new Map<string, string>();
    for (const path of sourceFiles('src')) {
      for (const match of read(path).matchAll(/export function (create\w*(?:Meter|SingleUseStore)|createRedisCache)\b/g)) factories.set(match[1], path);
    }
    expect(Object.fromEntries(factories)).toEqual({
      createMemoryMeter: 'src/metering/memory/meter.ts',
      createMemorySingleUseStore: 'src/metering/memory/single-use.ts',
      createSqliteMeter: 'src/metering/sqlite/meter.ts',
      createSqliteSingleUseStore: 'src/metering/sqlite/single-use.ts',
      createRedisMeter: 'src/metering/redis/meter.ts',
      createRedisSingleUseStore: 'src/metering/redis/single-use.ts',
      createRedisCache: 'src/metering/redis/cache.ts',
    });
    expect(existsSync(join(ROOT, 'src/redis'))).toBe(false);
  });
});
