/**
 * The fifteen products of SPEC.md: path segment, key prefixes, and which envelope and
 * status fields each carries. Everything that differs per product by table lives here.
 */
export const PRODUCT_IDS = [
  'tls',
  'domainrep',
  'emailval',
  'timezone',
  'riskscore',
  'emailauth',
  'geoip',
  'asn',
  'dnsbl',
  'whois',
  'captcha',
  'useragent',
  'pwbreach',
  'scamrisk',
  'webhookip',
] as const;

export type ProductId = (typeof PRODUCT_IDS)[number];

export interface ProductInfo {
  id: ProductId;
  secretPrefix: string;
  publicPrefix: string;
  /** Lookup responses carry `fetched_at` (SPEC: conventions table). */
  hasFetchedAt: boolean;
  /** The status resource carries `database_records`. */
  hasDatabaseRecords: boolean;
  /**
   * A query parameter the status route also takes the key from (captcha's `?sitekey=`, SPEC:
   * captcha GET status); the Bearer header still wins.
   */
  statusKeyParam?: string;
}

const FETCHED_AT: ReadonlySet<ProductId> = new Set(['emailval', 'riskscore', 'emailauth', 'geoip', 'asn', 'dnsbl', 'whois']);

const PREFIXES: Record<ProductId, [secret: string, pub: string]> = {
  tls: ['tl_sec_', 'tl_pub_'],
  domainrep: ['dr_sec_', 'dr_pub_'],
  emailval: ['ev_sec_', 'ev_pub_'],
  timezone: ['tz_sec_', 'tz_pub_'],
  riskscore: ['rs_sec_', 'rs_pub_'],
  emailauth: ['ea_sec_', 'ea_pub_'],
  geoip: ['geo_sec_', 'geo_pub_'],
  asn: ['as_sec_', 'as_pub_'],
  dnsbl: ['bl_sec_', 'bl_pub_'],
  whois: ['wh_sec_', 'wh_pub_'],
  captcha: ['tf_sec_', 'tf_pub_'],
  useragent: ['ua_sec_', 'ua_pub_'],
  pwbreach: ['pb_sec_', 'pb_pub_'],
  // The spec leaves the scamrisk public prefix open; ours is sa_pub_.
  scamrisk: ['sa_sec_', 'sa_pub_'],
  webhookip: ['wk_sec_', 'wk_pub_'],
};

export const PRODUCTS: Readonly<Record<ProductId, ProductInfo>> = Object.freeze(
  Object.fromEntries(
    PRODUCT_IDS.map((id) => [
      id,
      {
        id,
        secretPrefix: PREFIXES[id][0],
        publicPrefix: PREFIXES[id][1],
        hasFetchedAt: FETCHED_AT.has(id),
        hasDatabaseRecords: FETCHED_AT.has(id),
        ...(id === 'captcha' ? { statusKeyParam: 'sitekey' } : {}),
      },
    ]),
  ) as Record<ProductId, ProductInfo>,
);

export function isProductId(value: string): value is ProductId {
  return Object.hasOwn(PRODUCTS, value);
}

/** The identifier types scamrisk lists on its status route. */
export const SCAMRISK_TYPES = ['email', 'phone', 'ip', 'username', 'address', 'crypto', 'domain', 'url'] as const;
