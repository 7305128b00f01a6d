/**
 * The product list: every product's descriptor, once, in registry order (captcha, which has no
 * lookup engine, last). `ProductId`, the catalog, the HTTP client, the CLI's product commands
 * and, through each descriptor's `load`, the registry of modules come from it. A new product is
 * its folder plus one line here (test/architecture/add-a-product.test.ts proves it).
 */
import useragent from './useragent/descriptor.js';
import webhookip from './webhookip/descriptor.js';
import geoip from './geoip/descriptor.js';
import timezone from './timezone/descriptor.js';
import emailauth from './emailauth/descriptor.js';
import dnsbl from './dnsbl/descriptor.js';
import emailval from './emailval/descriptor.js';
import tls from './tls/descriptor.js';
import whois from './whois/descriptor.js';
import asn from './asn/descriptor.js';
import pwbreach from './pwbreach/descriptor.js';
import scamrisk from './scamrisk/descriptor.js';
import domainrep from './domainrep/descriptor.js';
import riskscore from './riskscore/descriptor.js';
import captcha from './captcha/descriptor.js';

// One entry per line, so products added side by side merge cleanly.
export const PRODUCT_DESCRIPTORS = [
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
  captcha,
] as const;
