/**
 * The port-43 parser against the 66 real answers of richardpenman/whois's test suite
 * (test/fixtures/whois): registrar, the three dates as instants (second precision), status as
 * a set (EPP URLs dropped) and nameservers (lower case, where the expected parse lists them),
 * compared with python-whois's expected parse, except for the fields corrections.json lists
 * with a reason each. Also the date reader and the not-found and redaction rules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatInstant, parseRegistryDate } from '../../src/products/whois/dates.js';
import { parseWhoisText } from '../../src/products/whois/parse.js';

const DIR = join(import.meta.dirname, '../fixtures/whois');
const SAMPLES = readdirSync(join(DIR, 'whois')).sort();

type Field = 'registrar' | 'created' | 'updated' | 'expires' | 'status' | 'nameservers';
interface Correction {
  ours: unknown;
  kind: 'expected-missed' | 'expected-wrong' | 'ours-by-design';
  reason: string;
}
const CORRECTIONS = (JSON.parse(readFileSync(join(DIR, 'corrections.json'), 'utf8')) as { corrections: Record<string, Partial<Record<Field, Correction>>> })
  .corrections;

/** python-whois's expected values in our shapes: instants, status sets, lower-case hosts. */
function expectedOf(name: string): Record<Field, unknown> {
  const raw = JSON.parse(readFileSync(join(DIR, 'expected', name), 'utf8')) as Record<string, unknown>;
  // A list of dates means python-whois collected every match; the domain's own is the first.
  const date = (value: unknown) => {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first !== 'string') return null;
    return formatInstant(Date.parse(first.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1')));
  };
  const status =
    raw.status == null ? [] : (Array.isArray(raw.status) ? raw.status : [raw.status]).map((s: string) => s.replace(/\s*https?:\/\/\S*/g, '').trim());
  const nameservers = Array.isArray(raw.name_servers)
    ? [...new Set(raw.name_servers.map((n: string) => n.split(/\s/)[0].toLowerCase().replace(/\.$/, '')))]
    : undefined;
  return {
    registrar: raw.registrar ?? null,
    created: date(raw.creation_date),
    updated: date(raw.updated_date),
    expires: date(raw.expiration_date),
    status,
    nameservers,
  };
}

function oursOf(name: string): Record<Field, unknown> {
  const { record } = parseWhoisText(readFileSync(join(DIR, 'whois', name), 'utf8'));
  const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));
  return {
    registrar: record.registrar,
    created: iso(record.createdAt),
    updated: iso(record.updatedAt),
    expires: iso(record.expiresAt),
    status: record.status,
    nameservers: record.nameservers,
  };
}

/** Status and nameserver lists compare as sets. */
const comparable = (field: Field, value: unknown) =>
  (field === 'status' || field === 'nameservers') && Array.isArray(value) ? [...new Set(value)].sort() : value;

const FIELDS: Field[] = ['registrar', 'created', 'updated', 'expires', 'status', 'nameservers'];

describe('the 66 WHOIS samples', () => {
  it('has the samples and an expected parse for each', () => {
    expect(SAMPLES).toHaveLength(66);
    for (const name of SAMPLES) expect(() => expectedOf(name)).not.toThrow();
  });

  it.each(SAMPLES)('%s parses to the expected values (or the documented correction)', (name) => {
    const expected = expectedOf(name);
    const ours = oursOf(name);
    for (const field of FIELDS) {
      if (field === 'nameservers' && expected.nameservers === undefined) continue;
      const correction = CORRECTIONS[name]?.[field];
      const want = correction ? correction.ours : expected[field];
      expect(comparable(field, ours[field]), `${name} ${field}`).toEqual(comparable(field, want));
    }
  });

  it('agrees with the untouched expected parse on every field of 42 samples (the other 24 differ where corrections.json says why)', () => {
    let agree = 0;
    for (const name of SAMPLES) {
      const expected = expectedOf(name);
      const ours = oursOf(name);
      const same = FIELDS.every(
        (field) =>
          (field === 'nameservers' && expected.nameservers === undefined) ||
          JSON.stringify(comparable(field, ours[field])) === JSON.stringify(comparable(field, expected[field])),
      );
      if (same) agree++;
      else expect(CORRECTIONS[name], `${name} differs but has no correction`).toBeDefined();
    }
    expect(agree).toBe(42);
    expect(Object.keys(CORRECTIONS)).toHaveLength(24);
  });

  it('reads no sample as "not found", and finds the thin registries\' referrals', () => {
    for (const name of SAMPLES) expect(parseWhoisText(readFileSync(join(DIR, 'whois', name), 'utf8')).notFound, name).toBe(false);
    const referral = (name: string) => parseWhoisText(readFileSync(join(DIR, 'whois', name), 'utf8')).referral;
    expect(referral('urlowl.com')).toBe('whois.dynadot.com');
    expect(referral('squatter.net')).toBe('whois.domaindiscover.com');
    expect(referral('google.com.pe')).toBeNull(); // 'WHOIS Server: NIC .PE' is no hostname
  });
});

describe('parseRegistryDate', () => {
  it.each([
    ['2024-06-03T09:54:56Z', '2024-06-03T09:54:56Z'],
    ['2021-04-14T02:30:22.000+0000', '2021-04-14T02:30:22Z'],
    ['2021-05-07T02:36:33', '2021-05-07T02:36:33Z'],
    ['2002-12-04 00:00:00+02', '2002-12-03T22:00:00Z'],
    ['1999.10.27 13:00:00', '1999-10-27T13:00:00Z'],
    ['2025/05/29 10:45:59 (JST)', '2025-05-29T01:45:59Z'],
    ['20141204 14:57:44', '2014-12-04T14:57:44Z'],
    ['19990518 #162310', '1999-05-18T00:00:00Z'],
    ['18.7.2012 04:04:23', '2012-07-18T04:04:23Z'],
    ['02/11/2019 23:59:00', '2019-11-02T23:59:00Z'],
    ['05-06-1999', '1999-06-05T00:00:00Z'],
    ['05-Dec-2020', '2020-12-05T00:00:00Z'],
    ['05-Oct-1997 04:00:00 UTC', '1997-10-05T04:00:00Z'],
    ['29-APR-05', '2005-04-29T00:00:00Z'],
    ['2001-Aug-23.', '2001-08-23T00:00:00Z'],
    ['Wed Mar  5 00:13:49 2025', '2025-03-05T00:13:49Z'],
    ['2009-07-01 12:44:02 (GMT+0:00)', '2009-07-01T12:44:02Z'],
    ['2019-11-09 (YYYY-MM-DD)', '2019-11-09T00:00:00Z'],
    ['2002-10-22 17:48:23 CLST', '2002-10-22T20:48:23Z'],
    ['Thu, 26 Jun 2008 21:40:25 EDT', '2008-06-27T01:40:25Z'],
  ])('%s is %s', (text, iso) => {
    const ms = parseRegistryDate(text);
    expect(ms === null ? null : formatInstant(ms)).toBe(iso);
  });

  it.each([
    'before Aug-1996',
    'see at www.register.bg',
    '2019-02-30',
    '2019-13-01',
    '2019-01-01 25:00:00',
    'registrar AT ns.il 19990605 (Assigned)',
    '',
    'REDACTED FOR PRIVACY',
  ])('%j is not a date', (text) => {
    expect(parseRegistryDate(text)).toBeNull();
  });
});

describe('parseWhoisText rules', () => {
  it('reads redacted and placeholder values as absent', () => {
    const { record } = parseWhoisText(
      [
        'Domain Name: example.com',
        'Registrar: REDACTED FOR PRIVACY',
        'Sponsoring Registrar: Data Protected',
        'Creation Date: 2001-02-03T04:05:06Z',
        'Name Server: NS1.EXAMPLE.NET.',
      ].join('\n'),
    );
    expect(record).toMatchObject({ registrar: null, createdAt: Date.UTC(2001, 1, 3, 4, 5, 6), nameservers: ['ns1.example.net'] });
    for (const hidden of [
      'Not Disclosed',
      'NOT DISCLOSED!',
      'Hidden upon user request',
      'Redacted | EU Data Subject',
      'N/A',
      '-',
      'Withheld for Privacy Purposes',
    ]) {
      expect(parseWhoisText(`Domain Name: example.com\nRegistrar: ${hidden}\nCreation Date: 2001-02-03`).record.registrar, hidden).toBeNull();
    }
  });

  it.each([
    ['Verisign', 'No match for "NOSUCH-EXAMPLE.COM".\n>>> Last update of whois database: 2026-01-01T00:00:00Z <<<'],
    ['DENIC', 'Domain: nosuch-example.de\nStatus: free'],
    ['Nominet', '\n    No match for "nosuch-example.co.uk".\n\n    This domain name has not been registered.'],
    ['JPRS', '[ JPRS database provides information on network administration. ]\nNo match!!'],
    ['AFNIC', '%%\n%% NOT FOUND\n%%'],
    ['SWITCH', 'We do not have an entry in our database matching your query.'],
    ['CZ.NIC', '%ERROR:101: no entries found'],
    ['SIDN', 'nosuch-example.nl is free'],
    ['EURid', 'Domain: nosuch-example.eu\nStatus: AVAILABLE'],
    ['nic.at', '% nothing found'],
  ])('%s: "not found" is recognised', (_registry, text) => {
    expect(parseWhoisText(text).notFound).toBe(true);
  });

  it('never reads a disclaimer as "not found" when the answer holds registration facts', () => {
    const text =
      'Domain Name: EXAMPLE.US\nCreation Date: 2002-04-18T15:16:22Z\nNOTE: FAILURE TO LOCATE A RECORD IN THE WHOIS DATABASE IS NOT INDICATIVE OF THE AVAILABILITY OF A DOMAIN NAME. No match for anything.';
    expect(parseWhoisText(text).notFound).toBe(false);
  });

  it("reads a hostile server's answer in linear time: long values, repeated tags, runs of white space", () => {
    // Each line used to cost seconds to minutes (quadratic patterns), synchronously, past every
    // deadline: 256 KB of `[tag = ` took 9.6 s, 128 KB of spaces in a status 27 s.
    const text = [
      'Domain Name: hostile.test',
      `Registrar: Evil Registrar ${'[tag = '.repeat(37_000)}`,
      `Domain Status: ok${' '.repeat(131_072)}x`,
      `Domain Status: clientHold${' '.repeat(131_072)}- because`,
      'Creation Date: 2001-02-03T04:05:06Z',
    ].join('\n');
    const { record } = parseWhoisText(text);
    expect(record.registrar).toBeNull(); // over 256 characters: no name (record.ts)
    expect(record.status).toEqual(['ok', 'clientHold']);
    expect(formatInstant(record.createdAt!)).toBe('2001-02-03T04:05:06Z');
    // A tag that is the whole suffix still goes.
    expect(parseWhoisText('Domain Name: a.test\nRegistrar: NetNames   Limited [Tag = NETNAMES]').record.registrar).toBe('NetNames Limited');
  });

  it('keeps the registry facts when the registrar answer follows (first match wins)', () => {
    const { record } = parseWhoisText(readFileSync(join(DIR, 'whois', 'squatter.net'), 'utf8'));
    expect(formatInstant(record.updatedAt!)).toBe('2007-11-07T00:00:00Z'); // the registrar part says 05-Nov-2007
  });
});
