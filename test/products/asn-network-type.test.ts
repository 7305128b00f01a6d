/**
 * network_type on real organization names: every name below is checked to occur in the npm
 * CSV data (so the cases are real, not invented), then classified. The edge cases are names
 * that contain a keyword's letters without being that word.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { locateAsnPackage } from '../../src/products/asn/sources.js';
import { classifyOrg, createOrgClassifier, orgWords } from '../../src/products/asn/network-type.js';
import { readName } from '../../src/products/asn/csv-index.js';
import type { AsnNetworkType } from '../../src/products/asn/types.js';
import { same } from '../cheap-expect.js';

/** Every organization name in the npm data. */
const NAMES: ReadonlySet<string> = (() => {
  const names = new Set<string>();
  for (const file of locateAsnPackage().files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const comma = line.split(',', 3).join(',').length; // the name starts after the third comma
      if (line) names.add(readName(line, comma + 1, line.length) ?? '');
    }
  }
  return names;
})();

const CASES: [string, AsnNetworkType][] = [
  // hosting: SPEC's words, and brand names built on them
  ['Hostinger International Limited', 'hosting'],
  ['AWN Server Hosting, LLC', 'hosting'],
  ['Cloudflare, Inc.', 'hosting'],
  ['Colocation America Corporation', 'hosting'],
  ['Adeo Datacenter ApS', 'hosting'],
  ['Ace Data Centers, Inc.', 'hosting'],
  ['WEBYNE DATA CENTRE PRIVATE LIMITED', 'hosting'],
  ['BlueVPS OU', 'hosting'],
  ['LLC Vpsville', 'hosting'],
  ['Host Universal Pty Ltd', 'hosting'],
  ['CHINANET SiChuan Telecom Internet Data Center', 'hosting'], // hosting comes before isp
  // education
  ['University of California, San Diego', 'education'],
  ['Silesian University of Technology, Computer Centre', 'education'],
  ['Bergen County Vocational Technical School District', 'education'],
  ['HBU.edu', 'education'],
  ['AS263588 - INSTITUTO FEDERAL DE EDU, CIENCIA E TECN DO CEARA', 'education'],
  ['Governors State University', 'education'], // "Governors" is not gov; "University" is education
  ['University of Missouri - dba the Missouri Research and Education Network (MOREn', 'education'], // before isp
  ['Ministry of Education - EMISC', 'education'], // SPEC order: education before government
  // government
  ['Seoul Metropolitan Government', 'government'],
  ['King County Gov', 'government'],
  ['AEC-GOV-AU-AS-AP - AUSTRALIAN ELECTORAL COMMISSION', 'government'],
  ['Agricultural Development Fund (gov)', 'government'],
  ['Ministerio De Economia, Comercio Y Empresa', 'government'],
  ['AS264190 - PREFEITURA MUNICIPAL DE INDAIATUBA', 'government'],
  ['Administration of the Governor and Government of the Kirov region', 'government'],
  // isp
  ['Comcast Cable Communications, LLC', 'isp'],
  ['Deutsche Telekom AG', 'isp'],
  ['TELEFONICA BRASIL S.A', 'isp'],
  ['COLOMBIA TELECOMUNICACIONES S.A. ESP', 'isp'], // "Colombia" is not colo
  ['3 Rivers Telephone Cooperative, Inc.', 'isp'],
  ['360 Broadband, LLC', 'isp'],
  ['Boingo Wireless, Inc.', 'isp'],
  ['American Fiber Network, Inc.', 'isp'],
  ['Andreas Andrianopoulos, trading as Patras Broadband Wireless ISP', 'isp'],
  ['AIQUEL EDUARDO RAUL (CABLE VISION SP)', 'isp'], // "Eduardo" is not edu; "Cable" is isp
  // unknown: no keyword, or a keyword's letters inside another word
  ['Google LLC', 'unknown'],
  ['Amazon.com, Inc.', 'unknown'],
  ['Level 32 Governor Macquarie Tower', 'unknown'], // "Governor" is not gov
  ['Carlos Eduardo de Almeida Informatica - ME', 'unknown'], // "Eduardo" is not edu
  ['Universal Audio, Inc.', 'unknown'], // "Universal" is not a university
  ['EMPRESA COLOMBIANA DE PETROLEOS, ECOPETROL', 'unknown'],
];

describe('network_type on organization names from the npm data', () => {
  it.each(CASES)('%s -> %s', (name, type) => {
    expect(NAMES.has(name), `${name} occurs in the CSV`).toBe(true);
    expect(classifyOrg(name)).toBe(type);
  });

  it('reads words without case or diacritics, split at anything not a letter or digit', () => {
    expect(orgWords('Telefónica del Perú S.A.A.')).toEqual(['telefonica', 'del', 'peru', 's', 'a', 'a']);
    expect(classifyOrg('Université de Montréal')).toBe('education');
    expect(classifyOrg("Governor's Bank")).toBe('unknown');
    expect(classifyOrg(null)).toBe('unknown');
    expect(classifyOrg('')).toBe('unknown');
  });

  it('classifies every name in the data, each into one of the five types, the same way memoised', () => {
    const memo = createOrgClassifier();
    const counts = new Map<AsnNetworkType, number>();
    for (const name of NAMES) {
      const type = memo(name);
      same(type, classifyOrg(name), name); // once per name in the data
      counts.set(type, (counts.get(type) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['education', 'government', 'hosting', 'isp', 'unknown']);
    // A coarse heuristic: most names carry no keyword at all.
    expect(counts.get('unknown')!).toBeGreaterThan(NAMES.size / 2);
  });
});
