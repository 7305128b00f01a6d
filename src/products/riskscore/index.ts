import { invalidOption } from '../../errors.js';
import { datasetDateMs } from '../../lib/datasets.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import { IP_LOOKUP_ROUTES } from '../route.js';
import { checkRiskScoreOptions, createRiskScoreEngine } from './engine.js';
import type { ProviderName, RiskScoreEngineOptions } from './types.js';
import { SOURCE_GROUPS } from './sources.js';
import { UPSTREAM_URLS } from './upstream.js';
import { parseSourceGroups, updateRiskScoreData, type RiskScoreUpdateReport } from './update.js';
import { RISKSCORE_DOC } from './doc.js';
import type { RiskScoreEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    riskscore: RiskScoreEngine;
  }
}

/** riskscore: risk and threat intelligence, location and network of an IP. */
export default defineProduct({
  id: 'riskscore',
  needs: ['geoip', 'asn', 'dnsbl'],
  optionNames: { provider: true, url: true, key: true, timeouts: true, cacheSize: true, cacheTtlMs: true, local: true, dnsbl: true, ipsumThreshold: true },
  checkOptions: (options) => void checkRiskScoreOptions(options),
  doctor: {
    // The abuse lists turn over daily (Tor exits, IPsum, DROP), the ranges monthly or so.
    freshness: {
      maxAgeDays: { tor: 30, ipsum: 30, 'spamhaus-drop': 30, 'hosting-vpn': 90, cloud: 90, 'apple-private-relay': 90 },
      refresh: 'seclookup data update riskscore',
    },
    upstream: (options) => {
      const provider = options?.provider;
      if (typeof provider !== 'string' || !Object.hasOwn(UPSTREAM_URLS, provider)) return undefined;
      const url = typeof options?.url === 'string' ? options.url : UPSTREAM_URLS[provider as keyof typeof UPSTREAM_URLS];
      return { url, why: `the ${provider} API riskscore asks` };
    },
  },
  createEngine: ({ dataDir, options, engine, cache, now, outbound }: EngineContext<RiskScoreEngineOptions, 'geoip' | 'asn' | 'dnsbl'>) =>
    createRiskScoreEngine({ options, dataDir, engine, cache, now, slots: outbound().slots }),
  // SPEC: GET ?ip= and GET /lookup/{ip}.
  routes: IP_LOOKUP_ROUTES,
  batch: { input: 'ip', args: (value): [string] => [value] },
  statusExtras: (engine) => ({ database_records: engine.databaseRecords }),
  // Each group of the local data as loaded, dated by snapshots.json (the newest is `fetched_at`); none with an upstream.
  datasetAges: (engine) => (engine.local?.groups ?? []).map((group) => ({ dataset: group.group, builtAtMs: datasetDateMs(group.snapshot) })),
  doc: RISKSCORE_DOC,
  cli: {
    input: 'a public IPv4 or IPv6 address',
    example: '185.220.101.1',
    args: (input): [string] => [input],
    settings: {
      'riskscore-provider': {
        help: 'riskscore: local (default), ipinfo or ipqualityscore',
        apply: (value) => ({ provider: providerSetting(value) }),
      },
      'riskscore-url': {
        help: "riskscore: the upstream's base URL (default: the provider's public API)",
        apply: (value) => ({ url: value.trim() }),
      },
      'riskscore-key': {
        help: "riskscore: the upstream's API key or token (prefer $SECLOOKUP_RISKSCORE_KEY)",
        apply: (value) => ({ key: value.trim() }),
      },
      'riskscore-local': {
        help: 'riskscore: off to not load the local data (default: on)',
        apply: (value) => ({ local: onOff(value, 'riskscore-local') }),
      },
      'riskscore-dnsbl': {
        help: 'riskscore: on to add DNSBL listings from the dnsbl engine (default: off)',
        apply: (value) => ({ dnsbl: onOff(value, 'riskscore-dnsbl') }),
      },
    },
  },
  dataset: {
    help: `riskscore fetches its local lists from their official URLs: tor (Onionoo exit
relays), hosting-vpn (X4BNet datacenter and VPN ranges and ASNs), cloud (provider ranges
via lord-alfred/ipranges), apple-private-relay (Apple's egress CSV), ipsum (IPsum), and
spamhaus-drop (Spamhaus DROP, DROPv6, ASN-DROP: not bundled; --source spamhaus-drop
installs it, under Spamhaus's terms). --source picks groups. A group whose download fails
or does not read keeps its previous files. Default per-request timeout: 60000 ms.`,
    sources: { names: SOURCE_GROUPS, parse: parseSourceGroups },
    async update({ dataDir, mirror, timeoutMs, source, onProgress }) {
      const sources = source === undefined ? undefined : parseSourceGroups(source);
      return describeUpdate(await updateRiskScoreData({ dataDir, mirror, timeoutMs, sources, onProgress }));
    },
  },
});

function describeUpdate(report: RiskScoreUpdateReport): DatasetUpdateReport {
  const summary = `riskscore: ${report.updated.length} updated (${report.updated.join(', ') || 'none'}), ${report.failed.length} failed; ${report.dir}`;
  const notes: string[] = [];
  const kept = report.failed.filter((f) => f.kept);
  const partial = report.failed.filter((f) => !f.kept);
  if (kept.length > 0) notes.push(`${kept.map((f) => `${f.group} (${f.reason})`).join(', ')}: previous data kept.`);
  if (partial.length > 0) notes.push(`${partial.map((f) => `${f.group} (${f.reason})`).join(', ')}: part new, part old; run the update again.`);
  if (report.updated.length > 0) notes.push('Restart `seclookup serve` to load the new data.');
  return { summary, ok: report.updated.length > 0 || report.failed.length === 0, notes };
}

function providerSetting(value: string): ProviderName {
  const text = value.trim().toLowerCase();
  if (text === 'local' || text === 'ipinfo' || text === 'ipqualityscore') return text;
  throw invalidOption(`expected local, ipinfo or ipqualityscore (got ${JSON.stringify(value)})`);
}

function onOff(value: string, name: string): boolean {
  const text = value.trim().toLowerCase();
  if (text === 'on' || text === 'true' || text === '1') return true;
  if (text === 'off' || text === 'false' || text === '0') return false;
  throw invalidOption(`${name}: expected on or off (got ${JSON.stringify(value)})`);
}
