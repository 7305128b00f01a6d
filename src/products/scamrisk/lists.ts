/**
 * The bundled lists under `<dataDir>/scamrisk/` (data/scamrisk/SOURCES.md): phishing domains
 * (MetaMask eth-phishing-detect, polkadot-js phishing), OFAC-sanctioned crypto addresses per
 * asset, and polkadot-js scam addresses per site or campaign.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listEntryToAscii } from '../../lib/domain.js';
import { parse as parseHost } from 'tldts';
import { SeclookupError } from '../../errors.js';
import { bundledDataDir, readJsonDataset } from '../../lib/datasets.js';
import { type HostListFile, isHostList, readHostListFile } from '../../lib/host-lists.js';
import { sharedFileData } from '../../lib/shared-file-data.js';
import { bitcoinScriptKey, canonicalCashaddr, ss58PublicKey } from './crypto.js';

/**
 * Snapshot dates of the bundled lists (their READMEs): a list signal's `last_seen`, unless
 * `<dataDir>/scamrisk/snapshots.json` (written by `seclookup data update scamrisk`) gives its date.
 */
export const LIST_DATES = {
  metamask: '2023-08-31T00:00:00+00:00',
  polkadot: '2026-02-03T00:00:00+00:00',
  polkadotAddresses: '2025-03-15T00:00:00+00:00',
  ofac: '2025-06-20T00:00:00+00:00',
} as const;
export type ListName = keyof typeof LIST_DATES;

export type PhishingMatch = { source: 'metamask' | 'polkadot'; entry: string; fuzzy?: boolean };

export interface ScamLists {
  /**
   * Phishing matches of a lower-case ASCII host, and of a page when `path` (a URL's path) is
   * given; empty when none or when an allowlist covers the host.
   */
  phishing(host: string, path?: string): PhishingMatch[];
  /** The MetaMask fuzzylist entries within its tolerance of the host (genuine ones excluded): look-alikes. */
  fuzzy(host: string): string[];
  /**
   * Assets under which OFAC lists the address (normalized: EVM lower case). A Bitcoin Cash
   * address is compared by its script (type and hash160), so its legacy and cashaddr spellings
   * meet: a cashaddr matches the BCH list in either spelling (and any list's cashaddr entries); a
   * legacy `1...`/`3...` address, the spelling of one script on Bitcoin, Bitcoin Cash and Bitcoin
   * SV alike, matches every list that lists it, and the BCH list's cashaddr entries of its script.
   */
  sanctioned(address: string): string[];
  /** Sites or campaigns polkadot-js lists the address under (SS58 compared by public key). */
  scamCampaigns(address: string): string[];
  /** Brand names the look-alike and brand-in-subdomain checks use. */
  readonly brands: readonly string[];
  /** Each list's date (ISO 8601 with `+00:00`): LIST_DATES, or the date of its last update. */
  readonly dates: Readonly<Record<ListName, string>>;
  readonly counts: { phishingDomains: number; allowDomains: number; sanctioned: number; scamAddresses: number };
}

/** Ours: brands checked in subdomains and for look-alikes, beside the MetaMask fuzzylist. */
export const BRANDS = [
  'paypal',
  'apple',
  'icloud',
  'google',
  'gmail',
  'microsoft',
  'outlook',
  'office365',
  'amazon',
  'netflix',
  'facebook',
  'instagram',
  'whatsapp',
  'linkedin',
  'twitter',
  'coinbase',
  'binance',
  'kraken',
  'metamask',
  'opensea',
  'uniswap',
  'ledger',
  'trezor',
  'blockchain',
  'etherscan',
  'myetherwallet',
  'chase',
  'wellsfargo',
  'bankofamerica',
  'hsbc',
  'barclays',
  'dhl',
  'fedex',
  'ups',
  'usps',
  'steam',
  'roblox',
  'dropbox',
  'docusign',
  'adobe',
] as const;

/**
 * A host list of a phishing file: an array of strings, mostly host names; empty only when
 * `mayBeEmpty` (allowlists). Each entry as hosts are compared: trimmed, lower case, no trailing
 * dot, and an IDN in its ASCII (punycode) form, as parseDomainName makes a host (polkadot-js lists
 * some in Unicode: `blåst.org`); a `*.` wildcard keeps its star. An entry that is not a valid name
 * stays as written (it matches nothing).
 */
function stringArray(file: HostListFile, path: string, key: string, mayBeEmpty = true): string[] {
  const list = file.list(key, mayBeEmpty);
  if (!isHostList(list))
    throw new SeclookupError('dataset_invalid', 'problem' in list ? `${path}: ${key} ${list.problem}` : `${path}: ${key} is not an array of strings`);
  // An entry with no ASCII form could match no checked name: it is kept as written.
  return list.ascii.map((ascii, i) => ascii ?? list.written[i].trim().toLowerCase()).filter((v) => v !== '');
}

/** A listed page: a host and a path under it (`x.com/SomeAccount`). */
interface DenyPage {
  entry: string;
  host: string;
  /** Lower case, from its first `/`, without a trailing one. */
  path: string;
}

/**
 * polkadot-js's `denySub`: pages (an impersonating account on a social site) rather than
 * whole hosts. Absent in older copies of the list.
 */
function denyPages(value: unknown, path: string): DenyPage[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new SeclookupError('dataset_invalid', `${path}: denySub is not an array of strings`);
  return (value as string[]).flatMap((written) => {
    const entry = written.trim().toLowerCase();
    const slash = entry.indexOf('/');
    const host = slash > 0 ? listEntryToAscii(entry.slice(0, slash)) : null;
    const pagePath = slash > 0 ? entry.slice(slash).replace(/\/+$/, '') : '';
    return host && pagePath !== '' ? [{ entry: written.trim(), host, path: pagePath }] : [];
  });
}

/** Whether a URL's path is the listed page's or below it, ignoring case (account names are). */
function pathUnder(urlPath: string, pagePath: string): boolean {
  const lower = urlPath.toLowerCase();
  return lower === pagePath || lower.startsWith(`${pagePath}/`);
}

/** One address per line: letters and digits (base58, bech32, hex, CashAddr with its prefix), 20 to 130 of them. */
export const LISTED_ADDRESS = /^(?=.{20,130}$)(?:[a-z]+:)?[A-Za-z0-9]+$/;

/** A line of an address list that is not an address. */
export class AddressListError extends Error {}

/**
 * The addresses of an OFAC list file (one per line; blank lines and `#` comments skipped). Any
 * other line refuses the whole file: the upstream lists are generated and clean, so one bad
 * line means the file is not such a list (or was damaged), and a partial list would pass
 * sanctioned wallets. Throws AddressListError naming the line.
 */
export function ofacAddresses(text: string): string[] {
  const addresses: string[] = [];
  text.split('\n').forEach((line, i) => {
    const value = line.trim();
    if (value === '' || value.startsWith('#')) return;
    if (!LISTED_ADDRESS.test(value))
      throw new AddressListError(`line ${i + 1} is not an address: ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value)}`);
    addresses.push(value);
  });
  return addresses;
}

/**
 * The assets of the bundled OFAC lists (data/scamrisk/ofac/; a test keeps this in step). A data
 * folder must have each of them, listing at least one address: OFAC does not unlist an asset's
 * addresses wholesale, and `data update` never writes an empty list (it refuses a download that
 * lists none), so a missing or empty one is damage, and would pass every sanctioned address of
 * that asset. Other assets may be added as empty files, for `data update` to fill.
 */
export const BUNDLED_OFAC_ASSETS = [
  'ARB',
  'BCH',
  'BSC',
  'BSV',
  'BTG',
  'DASH',
  'ETC',
  'ETH',
  'LTC',
  'TRX',
  'USDC',
  'USDT',
  'XBT',
  'XMR',
  'XRP',
  'XVG',
  'ZEC',
] as const;

const ofacFileName = (asset: string) => `sanctioned_addresses_${asset}.txt`;

function bundledAssetRemedy(asset: string): string {
  let bundled: string;
  try {
    bundled = join(bundledDataDir(), 'scamrisk', 'ofac', ofacFileName(asset));
  } catch {
    bundled = `seclookup's data/scamrisk/ofac/${ofacFileName(asset)}`;
  }
  return `the bundled data lists sanctioned ${asset} addresses, and without them every ${asset} wallet would pass the sanctions check; copy the file back from ${bundled} (then \`seclookup data update scamrisk --source ofac\` refreshes it)`;
}

/** tldts over the whole public suffix list: its private section (`alwaysdata.net`, `github.io`) too. */
const WITH_PRIVATE_SUFFIXES = { extractHostname: false, allowPrivateDomains: true, detectIp: false } as const;

/**
 * The host and each parent domain down to its registrable domain under the whole public suffix
 * list, private section included: `a.b.example.com` -> `a.b.example.com`, `b.example.com`,
 * `example.com`. A public suffix is never a parent: a list entry that is one (`org.in`,
 * `alwaysdata.net`, names of unrelated owners) speaks for that name alone, not for every site
 * under it. A host under no known suffix yields itself only.
 */
function* selfAndParents(host: string): Generator<string> {
  yield host;
  const suffix = parseHost(host, WITH_PRIVATE_SUFFIXES).publicSuffix;
  if (!suffix || suffix === host || !host.endsWith(`.${suffix}`)) return;
  let at = host.indexOf('.') + 1;
  while (at > 0 && host.length - at > suffix.length) {
    yield host.slice(at);
    at = host.indexOf('.', at) + 1;
  }
}

export function levenshtein(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  if (limit <= 1) return withinOneEdit(a, b, limit);
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * levenshtein for a limit of 0 or 1 (every caller's), without building the table: skip the
 * common prefix and suffix, then what is left must be one substitution, insertion or deletion.
 */
function withinOneEdit(a: string, b: string, limit: number): number {
  if (a === b) return 0;
  if (limit < 1) return 1;
  let start = 0;
  const shorter = Math.min(a.length, b.length);
  while (start < shorter && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  return endA - start <= 1 && endB - start <= 1 ? 1 : 2;
}

/** The host without its last label and a leading `www.`, as MetaMask's detector compares it. */
function fuzzyKey(host: string): string {
  return host.replace(/^www\./, '').replace(/\.[^.]+$/, '');
}

/** The files the lists are read from. The phishing domain lists are domainrep's too: data/phishing/ (see its README). */
function scamListPaths(dataDir: string) {
  return {
    metamaskPath: join(dataDir, 'phishing', 'metamask', 'config.json'),
    polkadotPath: join(dataDir, 'phishing', 'polkadot', 'all.json'),
    addressPath: join(dataDir, 'scamrisk', 'polkadot', 'address.json'),
    ofacDir: join(dataDir, 'scamrisk', 'ofac'),
    snapshotsPath: listSnapshotsPath(dataDir),
  };
}

const OFAC_FILE = /^sanctioned_addresses_[A-Z0-9]+\.txt$/;

/**
 * The lists of `dataDir`, read and checked, or the ones this process read before from the same,
 * unchanged files (a quarter of a second to read). Throws SeclookupError `dataset_missing` or
 * `dataset_invalid`, naming the file.
 */
export function loadScamLists(dataDir: string): ScamLists {
  const { metamaskPath, polkadotPath, addressPath, ofacDir, snapshotsPath } = scamListPaths(dataDir);
  let ofacFiles: string[] = [];
  try {
    ofacFiles = readdirSync(ofacDir).filter((f) => OFAC_FILE.test(f));
  } catch {
    // reported by readScamLists
  }
  const read = [metamaskPath, polkadotPath, addressPath, ofacDir, ...ofacFiles.map((f) => join(ofacDir, f)), snapshotsPath];
  return sharedFileData('scamrisk-lists', read, () => readScamLists(dataDir));
}

function readScamLists(dataDir: string): ScamLists {
  const { metamaskPath, polkadotPath, addressPath, ofacDir } = scamListPaths(dataDir);
  const metamaskFile = readHostListFile(metamaskPath);
  const metamask = metamaskFile.json as Record<string, unknown>;
  if (typeof metamask !== 'object' || metamask === null || Array.isArray(metamask))
    throw new SeclookupError('dataset_invalid', `${metamaskPath}: not a JSON object`);
  const mmBlock = new Set(stringArray(metamaskFile, metamaskPath, 'blacklist', false));
  const mmAllow = new Set(stringArray(metamaskFile, metamaskPath, 'whitelist'));
  const mmFuzzy = stringArray(metamaskFile, metamaskPath, 'fuzzylist');
  const fuzzyKeys = mmFuzzy.map(fuzzyKey);
  const tolerance = typeof metamask.tolerance === 'number' ? metamask.tolerance : 1;

  const polkadotFile = readHostListFile(polkadotPath);
  const polkadot = polkadotFile.json as Record<string, unknown>;
  if (typeof polkadot !== 'object' || polkadot === null || Array.isArray(polkadot))
    throw new SeclookupError('dataset_invalid', `${polkadotPath}: not a JSON object`);
  const pdDeny = new Set(stringArray(polkadotFile, polkadotPath, 'deny', false));
  const pdAllow = stringArray(polkadotFile, polkadotPath, 'allow');
  const pdDenyPages = denyPages(polkadot.denySub, polkadotPath);
  const pdAllowPlain = new Set(pdAllow.filter((a) => !a.startsWith('*.')));
  const pdAllowWild = pdAllow.filter((a) => a.startsWith('*.')).map((a) => a.slice(2));

  /** A polkadot allow entry guards a deny entry equal to it, or (wildcard `*.p`) equal to `p` or one label below it. */
  const guarded = (entry: string) =>
    pdAllowPlain.has(entry) || pdAllowWild.some((p) => entry === p || (entry.endsWith(`.${p}`) && !entry.slice(0, -p.length - 1).includes('.')));

  const campaignsByAddress = new Map<string, string[]>();
  const addresses = readJsonDataset(addressPath);
  if (typeof addresses !== 'object' || addresses === null || Array.isArray(addresses))
    throw new SeclookupError('dataset_invalid', `${addressPath}: not an object`);
  let scamAddresses = 0;
  for (const [campaign, list] of Object.entries(addresses)) {
    if (!Array.isArray(list)) throw new SeclookupError('dataset_invalid', `${addressPath}: ${campaign} is not an array`);
    for (const address of list) {
      if (typeof address !== 'string' || !LISTED_ADDRESS.test(address))
        throw new SeclookupError('dataset_invalid', `${addressPath}: ${campaign} lists ${JSON.stringify(String(address).slice(0, 60))}, not an address`);
      const key = ss58PublicKey(address)?.key ?? address;
      campaignsByAddress.set(key, [...(campaignsByAddress.get(key) ?? []), campaign]);
      scamAddresses++;
    }
  }
  if (scamAddresses === 0) throw new SeclookupError('dataset_invalid', `${addressPath}: lists no addresses`);

  const assetsByAddress = new Map<string, string[]>();
  const cashaddrAssets = new Map<string, string[]>();
  let files: string[];
  try {
    files = readdirSync(ofacDir).filter((f) => OFAC_FILE.test(f));
  } catch (error) {
    throw new SeclookupError('dataset_missing', `scamrisk OFAC folder ${ofacDir} cannot be read`, { cause: error });
  }
  // Every asset the bundled data lists must be there and list something: a missing or emptied
  // file would silently pass every sanctioned address of that asset.
  for (const asset of BUNDLED_OFAC_ASSETS) {
    const file = ofacFileName(asset);
    if (!files.includes(file))
      throw new SeclookupError('dataset_invalid', `scamrisk OFAC list ${join(ofacDir, file)} is missing: ${bundledAssetRemedy(asset)}`);
  }
  let sanctioned = 0;
  for (const file of files) {
    const asset = file.slice('sanctioned_addresses_'.length, -4);
    const path = join(ofacDir, file);
    let listed: string[];
    try {
      listed = ofacAddresses(readFileSync(path, 'utf8'));
    } catch (error) {
      if (error instanceof AddressListError) throw new SeclookupError('dataset_invalid', `scamrisk OFAC list ${path}: ${error.message}`, { cause: error });
      throw new SeclookupError('dataset_missing', `scamrisk OFAC list ${path} cannot be read`, { cause: error });
    }
    // An empty file of an asset the bundled data does not list is valid (an asset added for `data update`); a bundled asset's is not.
    if (listed.length === 0 && (BUNDLED_OFAC_ASSETS as readonly string[]).includes(asset))
      throw new SeclookupError('dataset_invalid', `scamrisk OFAC list ${path} lists no addresses: ${bundledAssetRemedy(asset)}`);
    for (const raw of listed) {
      const key = sanctionKey(raw);
      addAsset(assetsByAddress, key, asset);
      // What a cashaddr (a Bitcoin Cash address, nothing else) matches: the BCH list in either
      // spelling, and a cashaddr entry wherever listed. Not another asset's legacy entry of the
      // same script: that sanctions the Bitcoin (or Bitcoin SV) address.
      if (asset === 'BCH' || canonicalCashaddr(raw) !== null) addAsset(cashaddrAssets, key, asset);
      sanctioned++;
    }
  }
  if (sanctioned === 0)
    throw new SeclookupError(
      'dataset_invalid',
      `scamrisk OFAC folder ${ofacDir} lists no sanctioned addresses (no sanctioned_addresses_<ASSET>.txt with entries): every wallet would pass the sanctions check`,
    );

  const allowedByMetamask = (names: Iterable<string>) => {
    for (const name of names) if (mmAllow.has(name)) return true;
    return false;
  };

  return {
    phishing(host, path) {
      const names = [...selfAndParents(host)];
      if (allowedByMetamask(names)) return [];
      const matches: PhishingMatch[] = [];
      const metamask = names.find((name) => mmBlock.has(name) && !guarded(name));
      if (metamask !== undefined) matches.push({ source: 'metamask', entry: metamask });
      const polkadot = names.find((name) => pdDeny.has(name) && !guarded(name));
      const page = polkadot === undefined && path !== undefined ? pdDenyPages.find((p) => names.includes(p.host) && pathUnder(path, p.path)) : undefined;
      if (polkadot !== undefined) matches.push({ source: 'polkadot', entry: polkadot });
      else if (page !== undefined) matches.push({ source: 'polkadot', entry: page.entry });
      return matches;
    },
    fuzzy(host) {
      if (allowedByMetamask(selfAndParents(host)) || tolerance <= 0) return [];
      const key = fuzzyKey(host);
      return mmFuzzy.filter((_, i) => levenshtein(key, fuzzyKeys[i], tolerance) <= tolerance);
    },
    sanctioned: (address) => (canonicalCashaddr(address) === null ? assetsByAddress : cashaddrAssets).get(sanctionKey(address)) ?? [],
    scamCampaigns: (address) => campaignsByAddress.get(ss58PublicKey(address)?.key ?? address) ?? [],
    brands: BRANDS,
    dates: readListDates(dataDir),
    counts: { phishingDomains: mmBlock.size + pdDeny.size, allowDomains: mmAllow.size + pdAllow.length, sanctioned, scamAddresses },
  };
}

/** `<dataDir>/scamrisk/snapshots.json`: list name -> the date it was last fetched; it wins over LIST_DATES. */
export function listSnapshotsPath(dataDir: string): string {
  return join(dataDir, 'scamrisk', 'snapshots.json');
}

export function readListDates(dataDir: string): Record<ListName, string> {
  const dates: Record<ListName, string> = { ...LIST_DATES };
  const path = listSnapshotsPath(dataDir);
  if (!existsSync(path)) return dates;
  const doc = readJsonDataset(path);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new SeclookupError('dataset_invalid', `${path}: not an object`);
  for (const name of Object.keys(LIST_DATES) as ListName[]) {
    const value = (doc as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw new SeclookupError('dataset_invalid', `${path}: ${name} is not a date`);
    dates[name] = value;
  }
  return dates;
}

function addAsset(map: Map<string, string[]>, key: string, asset: string): void {
  const assets = map.get(key) ?? [];
  if (!assets.includes(asset)) assets.push(asset);
  map.set(key, assets);
}

/**
 * The key an address is compared under: EVM addresses case-insensitively; bech32 ones lower
 * case; a mainnet legacy `1...`/`3...` address and a cashaddr by the script they pay to
 * (`p2pkh:<hash160>`, bitcoinScriptKey), so the two spellings of a Bitcoin Cash address meet;
 * another cashaddr with its prefix; other base58 ones keep their case.
 */
export function sanctionKey(address: string): string {
  if (/^0x[0-9a-f]{40}$/i.test(address) || /^(?:bc|ltc|tb)1/i.test(address)) return address.toLowerCase();
  return bitcoinScriptKey(address) ?? canonicalCashaddr(address) ?? address;
}
