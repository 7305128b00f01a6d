/**
 * Upstream adapters: an IP-intelligence API turned into the same evidence the local data gives.
 * The key goes only to the configured URL (ipinfo: an `Authorization: Bearer` header;
 * IPQualityScore: the path, as its API requires), never into an error message or a log line.
 * Redirects are not followed, so the key never travels to another host. Operator-configured
 * URLs do not go through the outbound guard (they are not client input; a private URL, such
 * as an internal proxy, is the operator's choice), as pwbreach's upstream.
 */
import { LookupError, SeclookupError } from '../../errors.js';
import type { TimeoutOptions } from '../../lib/deadline.js';
import type { OutboundSlots } from '../../lib/outbound-slots.js';
import { httpGet } from '../../lib/http-get.js';
import { countryNameOf, EU_MEMBERS } from '../geoip/countries.js';
import { NO_EVIDENCE, type Evidence } from './score.js';
import type { RiskScoreLocation, RiskScoreNetwork, UpstreamKind } from './types.js';

export const UPSTREAM_URLS: Readonly<Record<UpstreamKind, string>> = {
  ipinfo: 'https://ipinfo.io',
  ipqualityscore: 'https://ipqualityscore.com/api/json/ip',
};

export interface UpstreamAnswer {
  location: RiskScoreLocation;
  network: RiskScoreNetwork;
  evidence: Evidence;
  /** Provider tags beyond the evidence's (ipinfo's privacy `service`, IPQS `mobile`, ...). */
  extraTags: string[];
  isEu: boolean | null;
}

export interface UpstreamClient {
  lookup(ip: string): Promise<UpstreamAnswer>;
}

const MAX_BYTES = 256 * 1024;

export function createUpstreamClient(kind: UpstreamKind, url: string, key: string, timeouts: Required<TimeoutOptions>, slots?: OutboundSlots): UpstreamClient {
  const base = url.replace(/\/+$/, '');
  const name = kind === 'ipinfo' ? 'ipinfo' : 'IPQualityScore';
  const failed = (why: string) => new LookupError('lookup_failed', `${name} lookup failed: ${why}`);

  async function get(target: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
    let response;
    try {
      response = await httpGet(target, {
        timeouts,
        slots,
        maxBytes: MAX_BYTES,
        headers: { accept: 'application/json', 'user-agent': 'seclookup-riskscore', ...headers },
      });
    } catch (error) {
      // httpGet's messages name the failure (timeout, ECONNREFUSED), never the URL.
      throw failed(error instanceof SeclookupError ? error.message : 'request failed');
    }
    let body: unknown = null;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }

  return {
    async lookup(ip) {
      if (kind === 'ipinfo') {
        const { status, body } = await get(`${base}/${encodeURIComponent(ip)}`, { authorization: `Bearer ${key}` });
        if (status === 404) throw new LookupError('ip_not_found', `${name} has no data for ${ip}`);
        if (status !== 200) throw failed(`HTTP ${status}`);
        if (!isRecord(body)) throw failed('the answer is not a JSON object');
        if (body.bogon === true) throw new LookupError('ip_not_found', `${name} has no data for ${ip} (bogon)`);
        if (typeof body.ip !== 'string') throw failed('the answer has no "ip"');
        const missing = missingIpinfoPrivacy(body);
        if (missing) throw failed(missing);
        return fromIpinfo(body);
      }
      const { status, body } = await get(`${base}/${encodeURIComponent(key)}/${encodeURIComponent(ip)}`, {});
      if (status === 404) throw new LookupError('ip_not_found', `${name} has no data for ${ip}`);
      if (status !== 200) throw failed(`HTTP ${status}`);
      if (!isRecord(body)) throw failed('the answer is not a JSON object');
      if (body.success !== true) {
        const message = typeof body.message === 'string' ? body.message : '';
        if (/invalid ip|not found|no data/i.test(message)) throw new LookupError('ip_not_found', `${name} has no data for ${ip}`);
        // The provider's words go to the caller: never with the operator's key in them (IPQualityScore
        // has it in the request path, which an error message may repeat).
        throw failed(message ? `the provider said: ${withoutKey(message, key).slice(0, 120)}` : 'success is not true');
      }
      const missing = missingIpqsFields(body);
      if (missing) throw failed(missing);
      return fromIpqs(body);
    },
  };
}

/** `text` with every copy of `key`, as sent or URL-encoded, written `***`. */
export function withoutKey(text: string, key: string): string {
  if (key === '') return text;
  return text.split(key).join('***').split(encodeURIComponent(key)).join('***');
}

type Loose = Record<string, unknown>;

/** The privacy fields ipinfo documents (`service` aside); every one must be a boolean. */
const IPINFO_PRIVACY_FIELDS = ['vpn', 'proxy', 'tor', 'relay', 'hosting'] as const;
/** IPQualityScore's fields the evidence rests on; `active_vpn` / `active_tor` (premium plans) only add to them. */
const IPQS_BOOLEAN_FIELDS = ['proxy', 'vpn', 'tor', 'recent_abuse'] as const;

/**
 * Why an ipinfo answer cannot be scored, or null. ipinfo sends `privacy` only to tokens whose
 * plan includes privacy detection: an answer without it (a basic token) says nothing about
 * VPN, proxy, Tor or relay, and must never read as "none of them" (a clean verdict).
 */
function missingIpinfoPrivacy(body: Loose): string | null {
  if (!isRecord(body.privacy)) return 'the answer has no "privacy" data (the token\'s ipinfo plan does not include privacy detection, which riskscore needs)';
  const absent = IPINFO_PRIVACY_FIELDS.filter((field) => typeof (body.privacy as Loose)[field] !== 'boolean');
  return absent.length > 0 ? `the answer's "privacy" data has no ${absent.map((f) => `"${f}"`).join(', ')}` : null;
}

/** Why an IPQualityScore answer cannot be scored, or null: its score and flags are all needed (absent is not "no"). */
function missingIpqsFields(body: Loose): string | null {
  const absent: string[] = IPQS_BOOLEAN_FIELDS.filter((field) => typeof body[field] !== 'boolean');
  if (typeof body.fraud_score !== 'number' || !Number.isFinite(body.fraud_score)) absent.unshift('fraud_score');
  return absent.length > 0 ? `the answer has no ${absent.map((f) => `"${f}"`).join(', ')}` : null;
}

/**
 * ipinfo.io's `/{ip}` answer: `country`, `loc` "lat,lon", `org` "AS15169 Google LLC", `asn{}`,
 * `privacy{}` (checked present and complete by missingIpinfoPrivacy first).
 */
function fromIpinfo(body: Loose): UpstreamAnswer {
  const code = countryCode(body.country);
  const [lat, lon] = typeof body.loc === 'string' ? body.loc.split(',').map(Number) : [NaN, NaN];
  const asnObject = isRecord(body.asn) ? body.asn : {};
  const orgMatch = typeof body.org === 'string' ? /^AS(\d+)\s*(.*)$/.exec(body.org) : null;
  const asn = asnNumber(asnObject.asn) ?? (orgMatch ? Number(orgMatch[1]) : null);
  const privacy = body.privacy as Loose;
  const company = isRecord(body.company) ? body.company : {};
  const type = text(asnObject.type) ?? text(company.type);
  const service = text(privacy.service);
  return {
    location: {
      country: { code, name: code ? countryNameOf(code) : null },
      city: text(body.city),
      region: text(body.region),
      latitude: Number.isFinite(lat) ? lat : null,
      longitude: Number.isFinite(lon) ? lon : null,
      timezone: text(body.timezone),
    },
    network: { isp: text(asnObject.name) ?? (orgMatch ? text(orgMatch[2]) : null), asn, connection_type: type },
    evidence: {
      ...NO_EVIDENCE,
      tor: privacy.tor === true,
      vpnServer: privacy.vpn === true,
      proxy: privacy.proxy === true,
      relay: privacy.relay === true,
      hostingAsn: privacy.hosting === true || type === 'hosting',
    },
    extraTags: service ? [`service:${service}`] : [],
    isEu: code ? (typeof body.is_eu === 'boolean' ? body.is_eu : EU_MEMBERS.has(code)) : null,
  };
}

/** IPQualityScore's `/api/json/ip/{key}/{ip}` answer: `fraud_score`, `proxy`, `vpn`, `tor`, `recent_abuse`, ... (checked present by missingIpqsFields first). */
function fromIpqs(body: Loose): UpstreamAnswer {
  const code = countryCode(body.country_code);
  const connection = text(body.connection_type);
  const tags: string[] = [];
  if (body.is_crawler === true) tags.push('crawler');
  if (body.bot_status === true) tags.push('bot');
  if (body.mobile === true) tags.push('mobile');
  const tor = body.tor === true || body.active_tor === true;
  const vpn = body.vpn === true || body.active_vpn === true;
  return {
    location: {
      country: { code, name: code ? countryNameOf(code) : null },
      city: text(body.city),
      region: text(body.region),
      latitude: typeof body.latitude === 'number' && Number.isFinite(body.latitude) ? body.latitude : null,
      longitude: typeof body.longitude === 'number' && Number.isFinite(body.longitude) ? body.longitude : null,
      timezone: text(body.timezone),
    },
    network: { isp: text(body.ISP) ?? text(body.organization), asn: asnNumber(body.ASN), connection_type: connection },
    evidence: {
      ...NO_EVIDENCE,
      tor,
      vpnServer: vpn,
      // IPQS sets proxy for VPN and Tor too; a proxy only when neither explains it.
      proxy: body.proxy === true && !vpn && !tor,
      hostingAsn: connection === 'Data Center',
      reportedAbuse: body.recent_abuse === true,
      providerScore: typeof body.fraud_score === 'number' && Number.isFinite(body.fraud_score) ? body.fraud_score : null,
    },
    extraTags: tags,
    isEu: code ? EU_MEMBERS.has(code) : null,
  };
}

function isRecord(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 200) : null;
}

function countryCode(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Za-z]{2}$/.test(value) && !['ZZ', 'XX', 'EU', 'AP'].includes(value.toUpperCase()) ? value.toUpperCase() : null;
}

function asnNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === 'string') {
    const match = /^(?:AS)?(\d{1,10})$/i.exec(value.trim());
    if (match && Number(match[1]) > 0) return Number(match[1]);
  }
  return null;
}
