import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { afterAll, describe, expect, it } from 'vitest';
import { LookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { formatIp, isPublicIp, parseCidr, parseIp } from '../../src/lib/ip.js';
import { createWebhookIpEngine, loadWebhookRanges, validateWebhookRanges } from '../../src/products/webhookip/engine.js';
import type { WebhookRangesDataset } from '../../src/products/webhookip/types.js';
import { equal } from '../cheap-expect.js';

const dataset = loadWebhookRanges(bundledDataDir());
const engine = createWebhookIpEngine(dataset);
const lookup = (ip: string, provider?: string) => engine.lookup(engine.prepare(ip, provider === undefined ? undefined : { provider })).result;

function errorOf(fn: () => unknown): LookupError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LookupError);
    return error as LookupError;
  }
  throw new Error('expected a LookupError');
}

const parsedProviders = dataset.providers.map((p) => ({ id: p.id, name: p.name, cidrs: p.cidrs.map(parseCidr) }));

/** The slow, obvious answer: parseIp + isPublicIp + a linear ipaddr.js scan of every CIDR. */
function reference(text: string): { code: string } | { ip: string; matched: boolean; providers: { id: string; name: string }[] } {
  const addr = parseIp(text.trim());
  if (!addr) return { code: 'invalid_ip' };
  if (!isPublicIp(addr)) return { code: 'ip_not_routable' };
  const providers = parsedProviders
    .filter((p) => p.cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits)))
    .map((p) => ({ id: p.id, name: p.name }));
  return { ip: formatIp(addr), matched: providers.length > 0, providers };
}

function actual(text: string): ReturnType<typeof reference> {
  try {
    return engine.lookup(engine.prepare(text)).result;
  } catch (error) {
    return { code: (error as LookupError).code };
  }
}

describe('webhookip engine: bundled dataset', () => {
  it('loads all providers and CIDRs', () => {
    expect(engine.providers).toHaveLength(29);
    expect(engine.cidrCount).toBe(214);
    expect(engine.providers.find((p) => p.id === 'atlassian')?.aliases).toEqual(['bitbucket', 'jira', 'confluence']);
    expect(engine.providers.find((p) => p.id === 'github')?.aliases).toEqual([]);
  });

  it('140.82.112.5 is GitHub', () => {
    expect(engine.lookup(engine.prepare('140.82.112.5'))).toEqual({
      result: { ip: '140.82.112.5', matched: true, providers: [{ id: 'github', name: 'GitHub' }] },
      cached: false,
    });
  });

  it('a Stripe webhook IP (a /32) matches, its neighbours do not', () => {
    expect(lookup('3.18.12.63')).toEqual({ ip: '3.18.12.63', matched: true, providers: [{ id: 'stripe', name: 'Stripe' }] });
    expect(lookup('3.18.12.62').matched).toBe(false);
    expect(lookup('3.18.12.64').matched).toBe(false);
  });

  it('an IPv6 address in 2606:50c0::/32 is GitHub, in canonical form', () => {
    expect(lookup('2606:50C0:0000:0000:0000:0000:0000:0153')).toEqual({
      ip: '2606:50c0::153',
      matched: true,
      providers: [{ id: 'github', name: 'GitHub' }],
    });
    expect(lookup('2a0a:a440::1').providers.map((p) => p.id)).toEqual(['github']);
  });

  it('a Svix IPv6 /56 matches its region', () => {
    expect(lookup('2600:1f24:64:80ff::1').providers.map((p) => p.id)).toEqual(['svix-us']);
  });

  it('8.8.8.8 is public and matches nothing', () => {
    expect(lookup('8.8.8.8')).toEqual({ ip: '8.8.8.8', matched: false, providers: [] });
    expect(lookup('2001:4860:4860::8888')).toEqual({ ip: '2001:4860:4860::8888', matched: false, providers: [] });
  });

  it('::ffff:140.82.112.5 normalises to 140.82.112.5', () => {
    expect(lookup('::ffff:140.82.112.5')).toEqual({ ip: '140.82.112.5', matched: true, providers: [{ id: 'github', name: 'GitHub' }] });
    expect(lookup('::ffff:8c52:7005').ip).toBe('140.82.112.5');
  });

  it("matches a 6to4 or NAT64 address as itself, never as the GitHub IPv4 inside it (a 6to4 source is anyone's to spoof)", () => {
    // 140.82.112.5 is 8c52:7005: in 2002:8c52:7005::/48 (6to4) and at 64:ff9b::8c52:7005 (NAT64).
    for (const ip of ['2002:8c52:7005::1', '64:ff9b::8c52:7005']) expect(lookup(ip)).toEqual({ ip, matched: false, providers: [] });
  });

  it('forgives surrounding whitespace', () => {
    expect(lookup(' 140.82.112.5\n').ip).toBe('140.82.112.5');
    expect(lookup('\t2606:50c0::1 ').ip).toBe('2606:50c0::1');
  });

  it('returns fresh objects: mutating a result changes nothing later', () => {
    const first = lookup('140.82.112.5');
    first.providers[0].name = 'changed';
    first.providers.push({ id: 'x', name: 'y' });
    expect(lookup('140.82.112.5').providers).toEqual([{ id: 'github', name: 'GitHub' }]);
  });
});

describe('webhookip engine: provider option', () => {
  it('restricts matching to the named provider', () => {
    expect(lookup('140.82.112.5', 'github').matched).toBe(true);
    expect(lookup('140.82.112.5', 'stripe')).toEqual({ ip: '140.82.112.5', matched: false, providers: [] });
  });

  it('accepts several ids, any case, with spaces and blanks', () => {
    expect(lookup('140.82.112.5', ' Stripe , GITHUB,, ').providers).toEqual([{ id: 'github', name: 'GitHub' }]);
    expect(lookup('140.82.112.5', '').matched).toBe(true); // empty means no filter
  });

  it('resolves aliases (jira, bitbucket, confluence -> atlassian)', () => {
    const atlassianIp = '104.192.137.241'; // in 104.192.137.240/28
    for (const alias of ['atlassian', 'jira', 'Bitbucket', 'confluence']) {
      expect(lookup(atlassianIp, alias).providers.map((p) => p.id)).toEqual(['atlassian']);
    }
    expect(lookup(atlassianIp, 'github').matched).toBe(false);
  });

  it('rejects an unknown provider with invalid_provider (400) naming the known ids', () => {
    const error = errorOf(() => lookup('140.82.112.5', 'github,nope'));
    expect(error.code).toBe('invalid_provider');
    expect(error.status).toBe(400);
    expect(error.message).toContain('unknown provider "nope"');
    expect(error.message).toContain('github, stripe');
    expect(error.message).toContain('jira');
  });

  it('checks the IP before the provider, and the provider before routability', () => {
    expect(errorOf(() => lookup('abc', 'nope')).code).toBe('invalid_ip');
    expect(errorOf(() => lookup('10.0.0.1', 'nope')).code).toBe('invalid_provider');
  });
});

describe('webhookip engine: input errors', () => {
  it.each([
    '10.0.0.1',
    '127.0.0.1',
    '::1',
    '192.0.2.1',
    '100.64.0.1',
    'fe80::1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '2001:db8::1',
    '::ffff:10.0.0.1',
    'fc00::1',
    // IPv4-compatible (deprecated), not mapped: an IPv6 address outside 2000::/3 in either spelling,
    // never GitHub's 140.82.112.5.
    '::140.82.112.5',
    '::8c52:7005',
  ])('%s is ip_not_routable (422)', (ip) => {
    const error = errorOf(() => lookup(ip));
    expect(error.code).toBe('ip_not_routable');
    expect(error.status).toBe(422);
  });

  it.each(['abc', '', ' ', '1.2.3', '256.1.1.1', '1.2.3.4.5', '01.2.3.4', '1.2.3.4/32', '2606:50c0::1%eth0', ':::', '1::2::3', '0x8c.82.112.5'])(
    '%j is invalid_ip (400)',
    (ip) => {
      const error = errorOf(() => lookup(ip));
      expect(error.code).toBe('invalid_ip');
      expect(error.status).toBe(400);
    },
  );

  it('rejects a missing or non-string ip', () => {
    for (const bad of [undefined, null, 42, {}]) expect(errorOf(() => engine.lookup(engine.prepare(bad as unknown as string))).code).toBe('invalid_ip');
  });
});

// --- the engine must agree with the obvious answer ------------------------------------------
// (lib/ip's fast parsing itself is checked against plain ipaddr.js in test/lib/ip.test.ts)

const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const v6Groups = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 });

/** An IPv6 text in one of the shapes people write: full, padded, upper-case, compressed. */
function renderV6(parts: number[], style: number): string {
  const h = parts.map((p) => p.toString(16));
  switch (style % 4) {
    case 0:
      return h.join(':');
    case 1:
      return parts.map((p) => p.toString(16).padStart(4, '0')).join(':');
    case 2:
      return new ipaddr.IPv6(parts).toRFC5952String().toUpperCase();
    default:
      return new ipaddr.IPv6(parts).toRFC5952String();
  }
}

/** First, last and neighbouring addresses of a CIDR: where a table or range check goes wrong. */
function edges(cidr: string): string[] {
  const [net, bits] = parseCidr(cidr);
  const bytes = net.toByteArray();
  const width = bytes.length * 8;
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  const size = 1n << BigInt(width - bits);
  const first = (value / size) * size;
  const out: string[] = [];
  for (const v of [first - 1n, first, first + 1n, first + size / 2n, first + size - 1n, first + size]) {
    if (v < 0n || v >= 1n << BigInt(width)) continue;
    const arr: number[] = [];
    for (let i = bytes.length - 1; i >= 0; i--) arr[i] = Number((v >> BigInt((bytes.length - 1 - i) * 8)) & 0xffn);
    out.push(ipaddr.fromByteArray(arr).toString());
  }
  return out;
}

/** `expect(actual(text), text).toEqual(reference(text))`, cheaply: this runs for thousands of addresses. */
function expectAsReference(text: string): void {
  equal(actual(text), reference(text), text);
}

describe('webhookip engine agrees with parseIp + isPublicIp + a linear scan', () => {
  it('at every edge of every bundled CIDR', () => {
    for (const provider of dataset.providers) {
      for (const cidr of provider.cidrs) for (const ip of edges(cidr)) expectAsReference(ip);
    }
  });

  it("at every edge of ipaddr.js's special (non-public) ranges, v4 and v6", () => {
    const special = (proto: unknown) => Object.values((proto as { SpecialRanges: Record<string, unknown> }).SpecialRanges);
    const ranges: string[] = [];
    for (const entry of [...special(ipaddr.IPv4.prototype), ...special(ipaddr.IPv6.prototype)]) {
      const list = (Array.isArray((entry as unknown[])[0]) ? entry : [entry]) as [ipaddr.IPv4 | ipaddr.IPv6, number][];
      for (const [addr, bits] of list) ranges.push(`${addr.toString()}/${bits}`);
    }
    expect(ranges.length).toBeGreaterThan(30);
    for (const range of ranges) for (const ip of edges(range)) expectAsReference(ip);
  });

  it('for random IPv4 addresses', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        expectAsReference(v4Text(n));
      }),
      { numRuns: 5000 },
    );
  });

  it('for random IPv6 addresses in every written form', () => {
    fc.assert(
      fc.property(v6Groups, fc.nat(), fc.boolean(), (parts, style, github) => {
        // Half of them land in a bundled range. A new array: changing fast-check's own value in place
        // made its shrinking loop forever once the property failed (the shrunk value came back changed).
        const groups = github ? [0x2606, 0x50c0, ...parts.slice(2)] : parts;
        const text = renderV6(groups, style);
        expectAsReference(text);
      }),
      { numRuns: 5000 },
    );
  });

  it('for random strings over the characters of IP addresses', () => {
    const chars = fc.constantFrom(...'0123456789abcdefABCDEF:.'.split(''));
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 20 }), (text) => {
        expectAsReference(text);
      }),
      { numRuns: 5000 },
    );
  });
});

// --- loading and validating the dataset file ------------------------------------------------

describe('loadWebhookRanges', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A data folder holding `content` as webhookip/ranges.json. */
  function dataDirWith(content: string): { dir: string; file: string } {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-wh-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'webhookip'));
    const file = join(dir, 'webhookip', 'ranges.json');
    writeFileSync(file, content);
    return { dir, file };
  }
  const valid = (): WebhookRangesDataset => structuredClone(dataset);

  it('throws naming the file for corrupt JSON', () => {
    const { dir, file } = dataDirWith('{"generated": "2026-11-22", "providers": [');
    expect(() => loadWebhookRanges(dir)).toThrow(file);
    expect(() => loadWebhookRanges(dir)).toThrow(/not valid JSON/);
  });

  it('throws naming the file for a missing file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-wh-'));
    dirs.push(dir);
    expect(() => loadWebhookRanges(dir)).toThrow(join(dir, 'webhookip', 'ranges.json'));
  });

  it('throws naming the file, provider and entry for a bad CIDR', () => {
    const data = valid();
    data.providers[1].cidrs[2] = '13.235.14.300/32';
    const { dir, file } = dataDirWith(JSON.stringify(data));
    const message = (() => {
      try {
        loadWebhookRanges(dir);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toContain(file);
    expect(message).toContain('providers[1] ("stripe")');
    expect(message).toContain('cidrs[2] "13.235.14.300/32" is not a valid CIDR');
  });

  it('rejects host bits, a missing id, duplicate ids and clashing aliases', () => {
    const cases: [(d: WebhookRangesDataset) => void, RegExp][] = [
      [(d) => (d.providers[0].cidrs[0] = '192.30.252.1/22'), /providers\[0\] \("github"\): cidrs\[0\] "192.30.252.1\/22" has host bits set/],
      [(d) => delete (d.providers[2] as Partial<(typeof d.providers)[number]>).id, /providers\[2\]: "id" must be a lower-case slug/],
      [(d) => (d.providers[3].id = 'github'), /id or alias "github" is used twice/],
      [(d) => (d.providers[0].aliases = ['jira']), /id or alias "jira" is used twice/],
      [(d) => (d.providers[0].cidrs = []), /"cidrs" must be a non-empty array/],
      [(d) => (d.generated = 'yesterday'), /"generated" must be a YYYY-MM-DD date/],
    ];
    for (const [spoil, message] of cases) {
      const data = valid();
      spoil(data);
      const { dir } = dataDirWith(JSON.stringify(data));
      expect(() => loadWebhookRanges(dir)).toThrow(message);
    }
  });

  it('refuses ranges broader than the update floor (/8, /16), 0.0.0.0/0 and ::/0 above all, and private ranges; the floor itself loads', () => {
    const cases: [string, RegExp][] = [
      ['0.0.0.0/0', /cidrs\[0\] "0.0.0.0\/0" is broader than \/8/],
      ['::/0', /cidrs\[0\] "::\/0" is broader than \/16/],
      ['4.0.0.0/7', /is broader than \/8/],
      ['2600::/15', /is broader than \/16/],
      ['10.0.0.0/8', /"10.0.0.0\/8" is not a public range/],
    ];
    for (const [cidr, message] of cases) {
      const data = valid();
      data.providers[0].cidrs[0] = cidr;
      const { dir, file } = dataDirWith(JSON.stringify(data));
      expect(() => loadWebhookRanges(dir), cidr).toThrow(message);
      expect(() => loadWebhookRanges(dir), cidr).toThrow(file);
    }
    const floor = valid();
    floor.providers[0].cidrs.push('4.0.0.0/8', '2600::/16');
    const floored = createWebhookIpEngine(floor);
    expect(floored.lookup(floored.prepare('4.1.2.3')).result.providers.map((p) => p.id)).toEqual(['github']);
  });

  it('refuses random bytes and an empty file, naming the file', () => {
    for (const content of [Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 151 + 7) % 256)).toString('latin1'), '']) {
      const { dir, file } = dataDirWith(content);
      expect(() => loadWebhookRanges(dir)).toThrow(file);
      expect(() => loadWebhookRanges(dir)).toThrow(/not valid JSON/);
    }
  });

  it('createWebhookIpEngine validates a dataset built in code too', () => {
    expect(() => createWebhookIpEngine({ generated: '2026-11-22', providers: [] })).toThrow(/non-empty array/);
    expect(() => validateWebhookRanges(null, 'x')).toThrow(/expected a JSON object/);
  });
});
