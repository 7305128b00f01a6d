/**
 * From evidence to the intelligence block: flags, verdict, risk and threat scores and levels,
 * anonymous confidence, tags and categories. Pure and deterministic, shared by every provider
 * (upstream answers are first turned into the same evidence), and monotone: adding a piece of
 * evidence (another listing, a higher list count) never lowers a score. README: riskscore.
 */

/** What the data says about an address. Every field is a piece of evidence; absent is false / 0 / []. */
export interface Evidence {
  /** On the Tor exit list (an exit relay's address at the snapshot). */
  tor: boolean;
  /** In a known commercial-VPN range (X4BNet vpn list), not counting Apple's relay ranges it includes. */
  vpnRange: boolean;
  /** The origin AS is on the VPN ASN list. */
  vpnAsn: boolean;
  /** A VPN provider's own published server address (ProtonVPN's list), or an upstream saying VPN. */
  vpnServer: boolean;
  /** An anonymising proxy (upstreams only: the local data has no open-proxy list). */
  proxy: boolean;
  /** An iCloud Private Relay egress range (or an upstream's "relay"). */
  relay: boolean;
  /** In a datacenter / hosting range (X4BNet datacenter list). */
  datacenterRange: boolean;
  /** The origin AS is on the datacenter ASN list. */
  datacenterAsn: boolean;
  /** The asn engine classifies the AS organization as hosting (network_type), or an upstream says hosting. */
  hostingAsn: boolean;
  /** Cloud and hosting providers whose published ranges hold the address. */
  cloud: readonly string[];
  /** Verified crawlers whose published ranges hold the address. */
  crawler: readonly string[];
  /** Uptime monitors whose published ranges hold the address. */
  monitor: readonly string[];
  /** Platforms (GitHub, Meta, X, Telegram) whose published ranges hold the address. */
  platform: readonly string[];
  /** How many public blocklists IPsum saw the address on (0 when not in IPsum). */
  ipsumLists: number;
  /** In a Spamhaus DROP netblock (installed by the operator). */
  drop: boolean;
  /** The origin AS is on Spamhaus ASN-DROP (installed by the operator). */
  asnDrop: boolean;
  /** An upstream reports recent verified abuse (IPQualityScore's recent_abuse). */
  reportedAbuse: boolean;
  /** DNSBL zones listing the address (the dnsbl engine, when enabled). */
  dnsblZones: readonly string[];
  /** A provider's own 0-100 score (IPQualityScore fraud_score); the risk score is never below it. Null: none. */
  providerScore: number | null;
}

export const NO_EVIDENCE: Evidence = Object.freeze({
  tor: false,
  vpnRange: false,
  vpnAsn: false,
  vpnServer: false,
  proxy: false,
  relay: false,
  datacenterRange: false,
  datacenterAsn: false,
  hostingAsn: false,
  cloud: [],
  crawler: [],
  monitor: [],
  platform: [],
  ipsumLists: 0,
  drop: false,
  asnDrop: false,
  reportedAbuse: false,
  dnsblZones: [],
  providerScore: null,
});

export type Verdict = 'clean' | 'hosting' | 'relay' | 'suspicious' | 'anonymizer' | 'malicious';
export type Level = 'low' | 'medium' | 'high' | 'critical';

export interface Flags {
  is_anonymous: boolean;
  is_proxy: boolean;
  is_vpn: boolean;
  is_tor: boolean;
  is_relay: boolean;
  is_malicious: boolean;
  is_hosting: boolean;
  is_network_service: boolean;
}

export interface Intelligence {
  verdict: Verdict;
  description: string;
  risk: { score: number; level: Level };
  threat: { score: number; level: Level };
  flags: Flags;
  anonymous_confidence: number;
  tags: string[];
  categories: string[];
}

/** IPsum lists from which an address is malicious. @default 3 (the feed author's "block-worthy") */
export const DEFAULT_IPSUM_THRESHOLD = 3;

/** Threat points by IPsum list count (index = lists, capped at 10). */
export const IPSUM_POINTS = [0, 15, 30, 50, 65, 75, 85, 90, 95, 100, 100] as const;
export const THREAT_POINTS = { drop: 70, asnDrop: 60, reportedAbuse: 50, dnsblPerZone: 15, dnsblMax: 30, tor: 10 } as const;
/** Anonymity points: the largest applies. */
export const ANONYMITY_POINTS = { tor: 60, vpn: 40, proxy: 40, relay: 15 } as const;
export const INFRASTRUCTURE_POINTS = { hosting: 25, networkService: 10 } as const;
/** Probability each signal alone means the address is an anonymiser; combined as 1 - prod(1 - p). */
export const ANONYMITY_CONFIDENCE = { tor: 0.95, relay: 0.95, vpnServer: 0.9, vpnRange: 0.75, proxy: 0.7, vpnAsn: 0.6 } as const;

/** Bands of both scores: low 0-24, medium 25-49, high 50-74, critical 75-100. */
export function levelOf(score: number): Level {
  return score >= 75 ? 'critical' : score >= 50 ? 'high' : score >= 25 ? 'medium' : 'low';
}

export function flagsOf(e: Evidence, ipsumThreshold = DEFAULT_IPSUM_THRESHOLD): Flags {
  const vpn = e.vpnRange || e.vpnAsn || e.vpnServer;
  return {
    is_anonymous: e.tor || vpn || e.relay || e.proxy,
    is_proxy: e.proxy,
    is_vpn: vpn,
    is_tor: e.tor,
    is_relay: e.relay,
    is_malicious: e.ipsumLists >= ipsumThreshold || e.drop || e.asnDrop || e.reportedAbuse,
    is_hosting: e.datacenterRange || e.datacenterAsn || e.hostingAsn || e.cloud.length > 0,
    is_network_service: e.crawler.length > 0 || e.monitor.length > 0 || e.platform.length > 0,
  };
}

export function threatScore(e: Evidence): number {
  const points =
    IPSUM_POINTS[Math.min(Math.max(0, Math.floor(e.ipsumLists)), 10)] +
    (e.drop ? THREAT_POINTS.drop : 0) +
    (e.asnDrop ? THREAT_POINTS.asnDrop : 0) +
    (e.reportedAbuse ? THREAT_POINTS.reportedAbuse : 0) +
    Math.min(e.dnsblZones.length * THREAT_POINTS.dnsblPerZone, THREAT_POINTS.dnsblMax) +
    (e.tor ? THREAT_POINTS.tor : 0);
  return Math.min(100, points);
}

export function riskScore(e: Evidence, flags = flagsOf(e)): number {
  const anonymity = Math.max(
    e.tor ? ANONYMITY_POINTS.tor : 0,
    flags.is_vpn ? ANONYMITY_POINTS.vpn : 0,
    e.proxy ? ANONYMITY_POINTS.proxy : 0,
    e.relay ? ANONYMITY_POINTS.relay : 0,
  );
  const infrastructure = Math.max(flags.is_hosting ? INFRASTRUCTURE_POINTS.hosting : 0, flags.is_network_service ? INFRASTRUCTURE_POINTS.networkService : 0);
  const sum = Math.min(100, threatScore(e) + anonymity + infrastructure);
  return Math.max(sum, clampScore(e.providerScore ?? 0));
}

export function anonymousConfidence(e: Evidence): number {
  let none = 1;
  if (e.tor) none *= 1 - ANONYMITY_CONFIDENCE.tor;
  if (e.relay) none *= 1 - ANONYMITY_CONFIDENCE.relay;
  if (e.vpnServer) none *= 1 - ANONYMITY_CONFIDENCE.vpnServer;
  if (e.vpnRange) none *= 1 - ANONYMITY_CONFIDENCE.vpnRange;
  if (e.proxy) none *= 1 - ANONYMITY_CONFIDENCE.proxy;
  if (e.vpnAsn) none *= 1 - ANONYMITY_CONFIDENCE.vpnAsn;
  return Math.round(100 * (1 - none));
}

/**
 * A provider's own score from which the address is `suspicious` though nothing else is listed:
 * the score that makes the risk level `high` (the risk score is never below the provider's).
 */
export const PROVIDER_SUSPICIOUS_SCORE = 50;

/** The provider's score, clamped, when it makes the address suspicious by itself; else null. */
function suspiciousProviderScore(e: Evidence): number | null {
  if (e.providerScore === null) return null;
  const score = clampScore(e.providerScore);
  return score >= PROVIDER_SUSPICIOUS_SCORE ? score : null;
}

/**
 * The first that applies: malicious, anonymizer, suspicious (IPsum below the threshold, a DNSBL,
 * or the provider's own score at PROVIDER_SUSPICIOUS_SCORE or more), relay, hosting, clean.
 */
export function verdictOf(e: Evidence, flags: Flags): Verdict {
  if (flags.is_malicious) return 'malicious';
  if (flags.is_tor || flags.is_vpn || flags.is_proxy) return 'anonymizer';
  if (e.ipsumLists > 0 || e.dnsblZones.length > 0 || suspiciousProviderScore(e) !== null) return 'suspicious';
  if (flags.is_relay) return 'relay';
  if (flags.is_hosting || flags.is_network_service) return 'hosting';
  return 'clean';
}

export function tagsOf(e: Evidence): string[] {
  const tags: string[] = [];
  if (e.tor) tags.push('tor_exit');
  if (e.vpnRange) tags.push('vpn_range');
  if (e.vpnAsn) tags.push('vpn_asn');
  if (e.vpnServer) tags.push('vpn_server');
  if (e.proxy) tags.push('proxy');
  if (e.relay) tags.push('private_relay');
  if (e.datacenterRange) tags.push('datacenter_range');
  if (e.datacenterAsn) tags.push('datacenter_asn');
  if (e.hostingAsn) tags.push('hosting_asn');
  for (const name of e.cloud) tags.push(`cloud:${name}`);
  for (const name of e.crawler) tags.push(`crawler:${name}`);
  for (const name of e.monitor) tags.push(`monitor:${name}`);
  for (const name of e.platform) tags.push(`platform:${name}`);
  if (e.ipsumLists > 0) tags.push(`ipsum:${e.ipsumLists}`);
  if (e.drop) tags.push('spamhaus_drop');
  if (e.asnDrop) tags.push('spamhaus_asndrop');
  if (e.reportedAbuse) tags.push('recent_abuse');
  for (const zone of e.dnsblZones) tags.push(`dnsbl:${zone}`);
  return tags;
}

export function categoriesOf(e: Evidence, flags: Flags): string[] {
  const out: string[] = [];
  if (flags.is_tor) out.push('tor');
  if (flags.is_vpn) out.push('vpn');
  if (flags.is_proxy) out.push('proxy');
  if (flags.is_relay) out.push('privacy_relay');
  if (flags.is_hosting) out.push('hosting');
  if (e.crawler.length > 0) out.push('crawler');
  if (e.monitor.length > 0) out.push('monitoring');
  if (e.platform.length > 0) out.push('platform');
  if (e.ipsumLists > 0 || e.reportedAbuse) out.push('abuse');
  if (e.drop || e.asnDrop) out.push('hijacked_or_criminal_network');
  if (e.dnsblZones.length > 0) out.push('spam');
  return out;
}

function describe(verdict: Verdict, e: Evidence, flags: Flags): string {
  switch (verdict) {
    case 'malicious': {
      const why: string[] = [];
      if (e.ipsumLists > 0) why.push(`seen on ${e.ipsumLists} public blocklist${e.ipsumLists === 1 ? '' : 's'} (IPsum)`);
      if (e.drop) why.push('in a Spamhaus DROP netblock');
      if (e.asnDrop) why.push('announced by an AS on Spamhaus ASN-DROP');
      if (e.reportedAbuse) why.push('reported for recent abuse by the provider');
      return `Malicious: ${why.join('; ')}.`;
    }
    case 'anonymizer':
      return flags.is_tor ? 'Anonymizer: a Tor exit relay.' : flags.is_vpn ? 'Anonymizer: a VPN network or server.' : 'Anonymizer: an anonymising proxy.';
    case 'suspicious': {
      const provider = suspiciousProviderScore(e);
      if (e.ipsumLists === 0 && e.dnsblZones.length === 0) return `Suspicious: the provider's own risk score is ${provider}/100.`;
      const listed =
        e.ipsumLists > 0
          ? `Suspicious: seen on ${e.ipsumLists} public blocklist${e.ipsumLists === 1 ? '' : 's'} (IPsum), below the malicious threshold`
          : `Suspicious: listed by ${e.dnsblZones.length} DNS blocklist${e.dnsblZones.length === 1 ? '' : 's'}`;
      return provider === null ? `${listed}.` : `${listed}; the provider's own risk score is ${provider}/100.`;
    }
    case 'relay':
      return "Privacy relay: an iCloud Private Relay egress address (ordinary consumers behind Apple's relay).";
    case 'hosting':
      return flags.is_hosting
        ? 'Hosting: a datacenter, cloud or hosting network, not a residential or mobile user.'
        : 'Hosting: a crawler, monitor or platform service address.';
    default:
      // A provider's score below PROVIDER_SUSPICIOUS_SCORE still raises the risk score: say so.
      return e.providerScore !== null && clampScore(e.providerScore) > 0
        ? `Clean: on none of the lists checked; the provider's own risk score is ${clampScore(e.providerScore)}/100.`
        : 'Clean: on none of the lists checked.';
  }
}

/** The whole intelligence block for the evidence. */
export function intelligenceOf(e: Evidence, ipsumThreshold = DEFAULT_IPSUM_THRESHOLD): Intelligence {
  const flags = flagsOf(e, ipsumThreshold);
  const threat = threatScore(e);
  const risk = riskScore(e, flags);
  const verdict = verdictOf(e, flags);
  return {
    verdict,
    description: describe(verdict, e, flags),
    risk: { score: risk, level: levelOf(risk) },
    threat: { score: threat, level: levelOf(threat) },
    flags,
    anonymous_confidence: anonymousConfidence(e),
    tags: tagsOf(e),
    categories: categoriesOf(e, flags),
  };
}

function clampScore(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.min(100, Math.round(value))) : 0;
}
