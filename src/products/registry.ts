/**
 * Every built product, once. `createLookup`, the API's routes and status extras,
 * `seclookup lookup`, `seclookup data update` and the bench runner all read this list; adding
 * a product is its folder under src/products/ plus one line here.
 */
import type { AnyProductModule } from './module.js';
import type { ProductId } from './catalog.js';
import dnsbl from './dnsbl/index.js';
import useragent from './useragent/index.js';
import webhookip from './webhookip/index.js';
import geoip from './geoip/index.js';
import timezone from './timezone/index.js';
import emailauth from './emailauth/index.js';
import emailval from './emailval/index.js';
import tls from './tls/index.js';
import whois from './whois/index.js';
import asn from './asn/index.js';
import pwbreach from './pwbreach/index.js';
import scamrisk from './scamrisk/index.js';
import domainrep from './domainrep/index.js';
import riskscore from './riskscore/index.js';
import captcha from './captcha/index.js';
import type { ServiceModule } from './service.js';

// One entry per line, so products added side by side merge cleanly.
export const PRODUCT_MODULES = [
  useragent,
  webhookip,
  geoip,
  timezone,
  emailauth,
  dnsbl,
  emailval,
  tls,
  whois,
  asn,
  pwbreach,
  scamrisk,
  domainrep,
  riskscore,
] as const;

/** The products that are not lookups and own their routes' handling (products/service.ts). */
export const SERVICE_MODULES: readonly ServiceModule[] = [captcha];

/** The products with a lookup engine, in registry order. */
export type BuiltProductId = (typeof PRODUCT_MODULES)[number]['id'];

const BY_ID: ReadonlyMap<ProductId, AnyProductModule> = new Map(PRODUCT_MODULES.map((module) => [module.id, module as AnyProductModule]));

/** The module of a built product, or undefined for a product that has only its status route. */
export function productModule(id: ProductId): AnyProductModule | undefined {
  return BY_ID.get(id);
}

export function isBuiltProduct(id: string): id is BuiltProductId {
  return BY_ID.has(id as ProductId);
}

export const BUILT_PRODUCT_IDS: readonly BuiltProductId[] = PRODUCT_MODULES.map((module) => module.id);
