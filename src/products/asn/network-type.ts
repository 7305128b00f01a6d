/**
 * SPEC's network_type: a coarse heuristic from organization-name keywords. hosting (hosting,
 * cloud, vps, datacenter, colocation), education (university, edu), government (government,
 * gov), isp (telecom-style organizations not classified above), unknown (no clear match).
 *
 * How a name is read **(ours)**: folded to lower case without diacritics (NFKD, combining marks
 * dropped, so `Telefónica` reads `telefonica`), then cut into words at every character that is
 * not a letter or a digit (`Cloudflare, Inc.` -> `cloudflare`, `inc`). Each class is a pattern
 * that must match a whole word, so `Governor's Bank` (`governor`) is not `gov`, `Eduardo` is not
 * `edu` and `Colombia` is not `colo`; where a keyword is commonly glued into brand names the
 * pattern says so explicitly (`cloud...` covers Cloudflare and CloudSigma, `...hosting...`
 * covers Webhosting). The classes are tried in SPEC's order and the first that matches any word
 * wins: `Cloud Telecom` is hosting, `University Network` is education.
 *
 * The word lists are below; the README repeats them.
 */
import type { AsnNetworkType } from './types.js';

/** Patterns over one word, in SPEC's order. */
const WORD_CLASSES: readonly (readonly [AsnNetworkType, RegExp])[] = [
  [
    'hosting',
    // host... (host, hosting, hosted, Hostinger, HostPapa), any word containing "hosting"
    // (webhosting), cloud... (Cloudflare, CloudSigma), any word containing "vps" (BlueVPS,
    // VPSville), vds, datacenter(s) / datacentre(s) (also glued: virtudatacenter), colo,
    // colocation, server(s), dedicated
    /^(?:host[\p{L}\p{N}]*|[\p{L}\p{N}]*hosting[\p{L}\p{N}]*|cloud[\p{L}\p{N}]*|[\p{L}\p{N}]*vps[\p{L}\p{N}]*|vds|[\p{L}\p{N}]*datacent(?:er|re)s?|colo|colocation|servers?|dedicated)$/u,
  ],
  [
    'education',
    // universit... (university, universitas, universitat, universite, ...), universidad(e),
    // uniwersytet, hochschule, univ, edu, educ, educa... (education, educational, educacao,
    // educacion, educativa), eduka... (edukacji, edukasi), college(s), school(s), academy,
    // academic, academia, polytechnic..., politecnic...
    /^(?:universit\p{L}*|universidad\p{L}*|uniwersytet\p{L}*|hochschule\p{L}*|univ|edu|educ|educa\p{L}*|eduka\p{L}*|colleges?|schools?|academy|academic|academia|polytechnic\p{L}*|politecnic\p{L}*)$/u,
  ],
  [
    'government',
    // government(s/al) (and the common misspelling goverment), gov, govt, gobierno, governo,
    // gouvernement, ministry/ministries and ministerio, ministere, ministerie, ministero,
    // ministerstvo, ministerstwo, ministarstvo, ministrstvo, municipal..., municipio(s)
    /^(?:governments?|governmental|goverment|gov|govt|gobierno|governo|gouvernement|ministry|ministries|minister(?:io|e|ie|o|stvo|stwo)|ministarstvo|ministrstvo|municipal\p{L}*|municipios?)$/u,
  ],
  [
    'isp',
    // telecom(s), telecommunication(s), telecomunicac..., telecomunicaz..., telekom...,
    // telekomunik..., telefon... (telefonica, telefonia), telephone, telephony, telco,
    // communication(s), comunicac..., comunicaz..., broadband, cable(s), cablevision, mobile,
    // mobil, wireless, internet, network(s), networking, isp, fiber/fibre/fibra, fibernet,
    // dsl, adsl, cellular, satellite, provedor(es), provider
    /^(?:telecoms?|telecommunications?|telecomunica\p{L}*|telekom\p{L}*|telefon\p{L}*|telephone|telephony|telco|communications?|comunica\p{L}*|broadband|cables?|cablevision|mobile|mobil|wireless|internet|networks?|networking|isp|fib(?:er|re|ra)|fibernet|a?dsl|cellular|satellite|provedor(?:es)?|provider)$/u,
  ],
];

/** Two-word phrases, per class: `data center(s)` / `data centre(s)` is hosting. */
const PHRASES: readonly (readonly [AsnNetworkType, RegExp, RegExp])[] = [['hosting', /^data$/, /^cent(?:er|re)s?$/]];

const ORDER: readonly AsnNetworkType[] = ['hosting', 'education', 'government', 'isp'];

/** The words of an organization name as the patterns see them. */
export function orgWords(org: string): string[] {
  return org
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** SPEC's network_type for an organization name; `unknown` for null or no clear match. */
export function classifyOrg(org: string | null): AsnNetworkType {
  if (org === null) return 'unknown';
  const words = orgWords(org);
  const found = new Set<AsnNetworkType>();
  for (const [type, pattern] of WORD_CLASSES) if (words.some((word) => pattern.test(word))) found.add(type);
  for (const [type, first, second] of PHRASES) {
    for (let i = 0; i + 1 < words.length; i++) if (first.test(words[i]) && second.test(words[i + 1])) found.add(type);
  }
  for (const type of ORDER) if (found.has(type)) return type;
  return 'unknown';
}

/**
 * classifyOrg, remembered per name: an engine sees the same few tens of thousands of names
 * over and over. Bounded (cleared when full) since names may come from any data file.
 */
export function createOrgClassifier(maxEntries = 200_000): (org: string | null) => AsnNetworkType {
  const memo = new Map<string, AsnNetworkType>();
  return (org) => {
    if (org === null) return 'unknown';
    let type = memo.get(org);
    if (type === undefined) {
      type = classifyOrg(org);
      if (memo.size >= maxEntries) memo.clear();
      memo.set(org, type);
    }
    return type;
  };
}
