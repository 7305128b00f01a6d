/**
 * Site keys: a public key (`tf_pub_`, in pages) and a secret key (`tf_sec_`, on the site's
 * server) of one captcha subscription, plus the site key's own settings: its domain allowlist,
 * its IP allowlist, managed mode and risk policy. The keys live in the meter like every product's keys
 * (hashed); the settings live in the meter's settings area beside them
 * (`captcha.sitekey.<public key id>`, and `captcha.secret.<secret key id>` pointing at it), so
 * every instance on one store sees the same site keys. A subscription may hold several site
 * keys (`--subscription ID`): they share its monthly quota; each has its own rate window.
 */
import { domainToASCII } from 'node:url';
import { parse as parseHost } from 'tldts';
import { invalidOption } from '../../errors.js';
import { formatIp, normalizeCidrs, parseIp } from '../../lib/ip.js';
import { generateKey, hashKey, visiblePrefix } from '../../lib/api-keys.js';
import type { KeyInfo, MeterAdmin, MeterHotPath, SettingsStore } from '../../metering/types.js';
import { PRODUCTS } from '../catalog.js';
import { DEFAULT_RISK_POLICY, mergeRiskPolicy, riskPolicyOf, type RiskPolicy } from './risk-policy.js';

/** The meter's roles site keys use: keys and settings, and `resolveKey` to find a site key by its key text. */
export type SiteKeyStore = MeterAdmin & SettingsStore & Pick<MeterHotPath, 'resolveKey'>;

/** A site key's settings, as stored. */
export interface SiteKeyConfig {
  /** The public key itself (it is public: pages carry it). */
  siteKey: string;
  publicKeyId: string;
  secretKeyId: string;
  subscriptionId: string;
  /** Hostnames (lower-case ASCII); each allows itself and its subdomains. Empty: browser routes answer domain_not_configured. */
  domains: string[];
  /** CIDRs callers must come from, on every captcha route; empty: any address. */
  ipAllow: string[];
  managed: boolean;
  /** Risk policy (risk-policy.ts); absent on site keys stored before it existed: read it with riskPolicyOf, which fills in the defaults. */
  risk?: RiskPolicy;
  createdAt: string;
}

export interface CreateSiteKeyOptions {
  domains?: string[];
  ipAllow?: string[];
  managed?: boolean;
  /** Risk policy; what is left out takes the default (`blockAt` 60, `scaleDifficulty` true). */
  risk?: Partial<RiskPolicy>;
  /** Plan of a new subscription. @default starter */
  plan?: string;
  /** Add the site key to this existing captcha subscription (sharing its quota) instead of a new one. */
  subscriptionId?: string;
}

/** What `sitekeys create` prints: the two keys (the secret is shown once), its domains and plan. */
export interface CreatedSiteKey {
  siteKey: string;
  secretKey: string;
  domains: string[];
  plan: string;
  subscriptionId: string;
}

const SITEKEY_SETTING = (publicKeyId: string) => `captcha.sitekey.${publicKeyId}`;
const SECRET_SETTING = (secretKeyId: string) => `captcha.secret.${secretKeyId}`;
const MAX_HOSTNAME = 253;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A page hostname as compared with allowlists: trimmed, lower-case, IDN to punycode, one
 * trailing dot dropped; a name of letter-digit-hyphen labels (`localhost` included) or an IP
 * address. Null for anything else (a URL, a port, a path, an empty string).
 */
export function normalizeHostname(text: unknown): string | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 1024) return null;
  const trimmed = text.trim().toLowerCase();
  // domainToASCII reads its text as a URL's host and drops what follows a path, query or
  // fragment delimiter (`shop.example.com/x` -> `shop.example.com`): such text is no hostname.
  if (/[/\\?#]/.test(trimmed)) return null;
  // Parsing a name as an IP costs an exception: only text that can be one is tried.
  if (looksLikeIp(trimmed)) {
    const ip = parseIp(trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : trimmed);
    if (ip) return formatIp(ip);
  }
  let name = domainToASCII(trimmed);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || name.length > MAX_HOSTNAME || !name.split('.').every((label) => LDH_LABEL.test(label))) return null;
  return name;
}

/** The allowlist rule: the host is a listed domain, or a subdomain of one (`a.shop.example.com` under `example.com`). */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  return domains.some((domain) => host === domain || (host.endsWith(`.${domain}`) && !looksLikeIp(domain)));
}

/** IPv4 (digits and dots) or IPv6 (a colon) text; hostnames have neither form. */
function looksLikeIp(text: string): boolean {
  return text.includes(':') || /^[0-9.]+$/.test(text);
}

/** Check and normalize an allowlist given by an operator; throws a TypeError naming the bad entry. */
export function normalizeDomains(domains: readonly string[]): string[] {
  const out: string[] = [];
  for (const entry of domains) {
    const host = normalizeHostname(entry);
    if (!host) throw invalidOption(`not a hostname: ${JSON.stringify(entry)} (give names such as example.com, without scheme, port or path)`);
    if (isListedPublicSuffix(host))
      throw invalidOption(`${host} is a public suffix: it would allow every site under it (give your own domain, such as example.${host})`);
    if (!out.includes(host)) out.push(host);
  }
  return out;
}

/**
 * A name the Public Suffix List holds, in its ICANN or its private section (`com`, `co.uk`,
 * `github.io`): as a site key's domain it would take in every site under it. A name the list
 * does not know (`localhost`, `test`) is a host like any other.
 */
function isListedPublicSuffix(host: string): boolean {
  const parsed = parseHost(host, { extractHostname: false, allowPrivateDomains: true, detectIp: false });
  return parsed.publicSuffix === host && (parsed.isIcann === true || parsed.isPrivate === true);
}

/** Create a site key (and its subscription, unless one is given). */
export async function createSiteKey(meter: MeterAdmin & SettingsStore, options: CreateSiteKeyOptions = {}): Promise<CreatedSiteKey> {
  const domains = normalizeDomains(options.domains ?? []);
  const ipAllow = normalizeCidrs(options.ipAllow ?? []);
  const risk = mergeRiskPolicy({ ...DEFAULT_RISK_POLICY }, options.risk);
  const siteKey = generateKey('captcha', 'public');
  const secretKey = generateKey('captcha', 'secret');
  const keys = [
    { kind: 'public' as const, hash: hashKey(siteKey), prefix: visiblePrefix(siteKey) },
    { kind: 'secret' as const, hash: hashKey(secretKey), prefix: visiblePrefix(secretKey) },
  ];
  let created: KeyInfo[];
  let subscriptionId: string;
  if (options.subscriptionId !== undefined) {
    const existing = (await meter.listKeys()).find((k) => k.subscriptionId === options.subscriptionId);
    if (!existing || existing.product !== 'captcha')
      throw invalidOption(`no captcha subscription ${describeKeyArgument(options.subscriptionId)} (see seclookup sitekeys list)`);
    if (options.plan !== undefined && options.plan !== existing.plan)
      throw invalidOption(`subscription ${options.subscriptionId} is on plan ${existing.plan}; a site key shares its subscription's plan`);
    created = await meter.addKeys(options.subscriptionId, keys);
    subscriptionId = options.subscriptionId;
  } else {
    const subscription = await meter.createSubscription({ product: 'captcha', plan: options.plan ?? 'starter', ipAllow: [], keys });
    created = subscription.keys;
    subscriptionId = subscription.subscriptionId;
  }
  const [pub, secret] = created;
  const config: SiteKeyConfig = {
    siteKey,
    publicKeyId: pub.id,
    secretKeyId: secret.id,
    subscriptionId,
    domains,
    ipAllow,
    managed: options.managed ?? false,
    risk,
    createdAt: pub.createdAt,
  };
  await meter.setSetting(SECRET_SETTING(secret.id), pub.id);
  await meter.setSetting(SITEKEY_SETTING(pub.id), JSON.stringify(config));
  return { siteKey, secretKey, domains, plan: pub.plan, subscriptionId };
}

/** A site key's settings by its public key's id, or null. */
export async function readSiteKey(meter: SettingsStore, publicKeyId: string): Promise<SiteKeyConfig | null> {
  const text = await meter.getSetting(SITEKEY_SETTING(publicKeyId));
  if (!text) return null;
  try {
    return JSON.parse(text) as SiteKeyConfig;
  } catch {
    return null;
  }
}

/** The public key id of the site key a secret key belongs to, or null. */
export async function publicKeyIdOfSecret(meter: SettingsStore, secretKeyId: string): Promise<string | null> {
  return meter.getSetting(SECRET_SETTING(secretKeyId));
}

/** A listed site key: its settings, plan and status. Never the secret. */
export interface SiteKeyListing extends SiteKeyConfig {
  plan: string;
  status: 'active' | 'revoked';
  secretKeyPrefix: string;
  /** The policy in force (the defaults for a site key stored without one). */
  risk: RiskPolicy;
}

export async function listSiteKeys(meter: MeterAdmin & SettingsStore): Promise<SiteKeyListing[]> {
  const keys = await meter.listKeys();
  const byId = new Map(keys.map((k) => [k.id, k]));
  const out: SiteKeyListing[] = [];
  for (const key of keys) {
    if (key.product !== 'captcha' || key.kind !== 'public') continue;
    const config = await readSiteKey(meter, key.id);
    if (!config) continue;
    const secret = byId.get(config.secretKeyId);
    const status = key.status === 'active' && secret?.status === 'active' ? 'active' : 'revoked';
    out.push({ ...config, plan: key.plan, status, secretKeyPrefix: secret?.prefix ?? '', risk: riskPolicyOf(config.risk) });
  }
  return out;
}

/**
 * Find a site key by its public key (the full `tf_pub_...` text), its secret key (`tf_sec_...`:
 * after a leak the operator may hold only that one) or the public key's id.
 */
export async function findSiteKey(meter: SiteKeyStore, keyOrId: string): Promise<SiteKeyConfig | null> {
  const text = keyOrId.trim();
  if (/^[1-9]\d*$/.test(text)) return readSiteKey(meter, text);
  const kind = text.startsWith(PRODUCTS.captcha.publicPrefix) ? 'public' : text.startsWith(PRODUCTS.captcha.secretPrefix) ? 'secret' : null;
  if (kind === null) return null;
  const resolved = await meter.resolveKey(hashKey(text));
  if (!resolved || resolved.kind !== kind || resolved.product !== 'captcha') return null;
  const publicKeyId = kind === 'public' ? resolved.id : await publicKeyIdOfSecret(meter, resolved.id);
  return publicKeyId === null ? null : readSiteKey(meter, publicKeyId);
}

/**
 * A key or id the operator gave, as messages may show it: quoted, unless it holds a secret key
 * (any product's `*_sec_`), which a message must never repeat (it reaches terminals, logs and
 * scrollback).
 */
export function describeKeyArgument(text: string): string {
  return Object.values(PRODUCTS).some((product) => text.includes(product.secretPrefix)) ? 'for the secret key given' : JSON.stringify(text);
}

export interface SiteKeyChanges {
  domains?: string[];
  ipAllow?: string[];
  managed?: boolean;
  /** Changes to the risk policy; fields left out keep their value. */
  risk?: Partial<RiskPolicy>;
}

export async function updateSiteKey(meter: SiteKeyStore, keyOrId: string, changes: SiteKeyChanges): Promise<SiteKeyConfig> {
  const config = await findSiteKey(meter, keyOrId);
  if (!config)
    throw invalidOption(`no site key ${describeKeyArgument(keyOrId)} (give the tf_pub_ key, its tf_sec_ key or its id; see seclookup sitekeys list)`);
  // A revoked key answers nothing: a change to it would look applied and do nothing.
  if (await isRevoked(meter, config)) throw invalidOption(`site key ${config.publicKeyId} is revoked; create another with seclookup sitekeys create`);
  const next: SiteKeyConfig = {
    ...config,
    ...(changes.domains !== undefined ? { domains: normalizeDomains(changes.domains) } : {}),
    ...(changes.ipAllow !== undefined ? { ipAllow: normalizeCidrs(changes.ipAllow) } : {}),
    ...(changes.managed !== undefined ? { managed: changes.managed } : {}),
    ...(changes.risk !== undefined ? { risk: mergeRiskPolicy(riskPolicyOf(config.risk), changes.risk) } : {}),
  };
  await meter.setSetting(SITEKEY_SETTING(config.publicKeyId), JSON.stringify(next));
  return next;
}

/**
 * Revoke both keys of a site key. Returns its settings and whether it was revoked already, or
 * null when there is no such site key.
 */
export async function revokeSiteKey(meter: SiteKeyStore, keyOrId: string): Promise<(SiteKeyConfig & { alreadyRevoked: boolean }) | null> {
  const config = await findSiteKey(meter, keyOrId);
  if (!config) return null;
  const alreadyRevoked = await isRevoked(meter, config);
  await meter.revokeKey(config.publicKeyId);
  await meter.revokeKey(config.secretKeyId);
  return { ...config, alreadyRevoked };
}

/** Both keys of a site key are revoked together: is either? */
async function isRevoked(meter: SiteKeyStore, config: SiteKeyConfig): Promise<boolean> {
  const ids = [config.publicKeyId, config.secretKeyId];
  return (await meter.listKeys()).some((key) => ids.includes(key.id) && key.status !== 'active');
}
