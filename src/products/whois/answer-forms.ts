/**
 * How registries say "no such domain" and "not now" on port 43: the forms collected from real
 * answers, each with the WHOIS servers seen writing it and one answer per server in the
 * accuracy corpus (test/fixtures/whois/corpus, `servers` maps host -> corpus file; the tests
 * check that each form matches its answers and that every "not registered" answer of the
 * corpus is recognised).
 *
 * A form is a pattern over the answer's lines with comment markers (`%`, `%%`, `#`, `>>>`,
 * `*`) and leading blanks removed, so `% No match for` (registro.br) reads as `No match for`.
 * Forms are tried in this order, and only on an answer that holds no registration facts (no
 * registrar, creation or expiry date, nameserver): a disclaimer that mentions "not found" or
 * "limit exceeded" never hides a registered domain.
 * 1. REFUSED: the server did not answer the question (rate limits, blocks, a busy or
 *    unavailable service, a query it rejects): 502 `lookup_failed`, saying so.
 * 2. NOT_FOUND: nobody holds the name (not found, available, free, and the names a registry
 *    reserves, restricts or refuses to register): 404 `domain_not_found`.
 */

export type RefusalKind = 'rate limit' | 'access blocked' | 'service unavailable' | 'query refused';

export interface AnswerForm {
  pattern: RegExp;
  /** WHOIS server -> an answer of that server in the corpus (path under test/fixtures/whois/corpus). */
  servers: Readonly<Record<string, string>>;
}

export interface RefusalForm extends AnswerForm {
  kind: RefusalKind;
}

const W = 'weppos';

export const REFUSED: readonly RefusalForm[] = [
  {
    kind: 'rate limit',
    pattern: /\b(?:limit|quota)\b.{0,60}\b(?:exceeded|reached)\b(?!\.\s*reduced information)/im,
    servers: {
      'whois.dns.pl': `${W}/whois.dns.pl/pl/response_throttled.txt`,
      'whois.pir.org': `${W}/whois.pir.org/org/response_throttled.txt`,
      'whois.nic.uk': `${W}/whois.nic.uk/uk/response_throttled.txt`,
      'whois.domain-registry.nl': `${W}/whois.domain-registry.nl/nl/response_throttled_daily.txt`,
      'whois.nic.cz': `${W}/whois.nic.cz/cz/response_throttled.txt`,
      'whois.denic.de': `${W}/whois.denic.de/de/response_throttled.txt`,
      'kero.yachay.pe': `${W}/kero.yachay.pe/pe/response_throttled.txt`,
    },
  },
  {
    kind: 'rate limit',
    pattern: /^too many (?:requests|queries|connections)\b/im,
    servers: {
      'whois.nic.fr': `${W}/whois.nic.fr/fr/response_throttled.txt`,
      'whois.nic.re': `${W}/whois.nic.re/re/response_throttled.txt`,
      'whois.nic.pm': `${W}/whois.nic.pm/pm/response_throttled.txt`,
      'whois.nic.wf': `${W}/whois.nic.wf/wf/response_throttled.txt`,
    },
  },
  {
    kind: 'rate limit',
    pattern:
      /\brequests? per (?:second|minute|hour) allowed\b|^excessive querying, grace period\b|^maximum queries per \w+ reached\b|\bgrace period, wait \d+ seconds\b|^please go away for \d+ seconds\b/im,
    servers: {
      'whois.domain-registry.nl': `${W}/whois.domain-registry.nl/nl/response_throttled.txt`,
      'whois.dns.be': `${W}/whois.dns.be/be/response_throttled_limit.txt`,
      'whois.eu': `${W}/whois.eu/eu/response_throttled.txt`,
      'coza-whois.registry.net.za': `${W}/coza-whois.registry.net.za/co.za/response_throttled.txt`,
    },
  },
  {
    kind: 'access blocked',
    pattern: /^(?:-?\d+:\s*)?ip address blocked\b|^query_status:\s*440\b/im,
    servers: {
      'whois.dns.be': `${W}/whois.dns.be/be/response_blocked.txt`,
      'whois.srs.net.nz': `${W}/whois.srs.net.nz/nz/response_throttled.txt`,
    },
  },
  {
    kind: 'service unavailable',
    pattern: /^service (?:temporarily )?unavailable\b|\bserver too busy\b/im,
    servers: {
      'whois.nic.it': `${W}/whois.nic.it/it/response_unavailable.txt`,
      'whois.domain-registry.nl': `${W}/whois.domain-registry.nl/nl/response_unavailable.txt`,
    },
  },
  {
    kind: 'query refused',
    pattern: /^invalid input\.?$|^error:\s*55\d{9}\b|^query_status:\s*5\d\d\b|\bsolo acepta consultas con dominios\b/im,
    servers: {
      'whois.nic.tr': `${W}/whois.nic.tr/tr/status_invalid.txt`,
      'whois.denic.de': `${W}/whois.denic.de/de/response_error_55000000010.txt`,
      'whois.srs.net.nz': `${W}/whois.srs.net.nz/nz/status_invalid.txt`,
      'whois.nic.bo': `${W}/whois.nic.bo/bo/status_available.txt`,
    },
  },
];

export const NOT_FOUND: readonly AnswerForm[] = [
  {
    pattern: /^(?:[^\n]{0,20}\/ )?no match(?:es|ing record)?\b|^\S+ no match$/im,
    servers: {
      'ccwhois.verisign-grs.com': `${W}/ccwhois.verisign-grs.com/cc/status_available.txt`,
      'tvwhois.verisign-grs.com': `${W}/tvwhois.verisign-grs.com/tv/status_available.txt`,
      'whois.amnic.net': `${W}/whois.amnic.net/am/status_available.txt`,
      'whois.cnnic.cn': `${W}/whois.cnnic.cn/cn/status_available.txt`,
      'whois.dns.pt': `${W}/whois.dns.pt/pt/status_available.txt`,
      'whois.dotgov.gov': `${W}/whois.dotgov.gov/gov/status_available.txt`,
      'whois.educause.edu': `${W}/whois.educause.edu/edu/status_available.txt`,
      'whois.gov.za': `${W}/whois.gov.za/gov.za/status_available.txt`,
      'whois.jprs.jp': `${W}/whois.jprs.jp/jp/status_available.txt`,
      'whois.monic.mo': `${W}/whois.monic.mo/mo/status_available.txt`,
      'whois.nic.hu': `${W}/whois.nic.hu/hu/status_available.txt`,
      'whois.nic.jobs': `${W}/whois.nic.jobs/jobs/status_available.txt`,
      'whois.nic.md': `${W}/whois.nic.md/md/status_available.txt`,
      'whois.nic.name': `${W}/whois.nic.name/name/status_available.txt`,
      'whois.nic.net.sa': `${W}/whois.nic.net.sa/sa/status_available.txt`,
      'whois.nic.org.uy': `${W}/whois.nic.org.uy/uy/status_available.txt`,
      'whois.nic.tr': `${W}/whois.nic.tr/tr/status_available.txt`,
      'whois.nic.uk': `${W}/whois.nic.uk/uk/property_status_missing.txt`,
      'whois.nic.ve': `${W}/whois.nic.ve/ve/property_status_missing.txt`,
      'whois.norid.no': `${W}/whois.norid.no/no/status_available.txt`,
      'whois.registro.br': `${W}/whois.registro.br/br/status_available.txt`,
      'whois.thnic.co.th': `${W}/whois.thnic.co.th/th/status_available.txt`,
      'whois.tonic.to': `${W}/whois.tonic.to/to/status_available.txt`,
      'whois.verisign-grs.com': `${W}/whois.verisign-grs.com/com/status_available.txt`,
      'whois.website.ws': `${W}/whois.website.ws/ws/status_available.txt`,
    },
  },
  {
    pattern: /^(?:error:(?:\d+:)?\s*)?no (?:entries|records?|results?|data|objects?)(?: were| was)? found\b/im,
    servers: {
      'whois.aeda.net.ae': `${W}/whois.aeda.net.ae/ae/status_available.txt`,
      'whois.audns.net.au': `${W}/whois.audns.net.au/au/status_available.txt`,
      'whois.biz': `${W}/whois.biz/biz/status_available.txt`,
      'whois.co.ug': `${W}/whois.co.ug/ug/status_available.txt`,
      'whois.dk-hostmaster.dk': `${W}/whois.dk-hostmaster.dk/dk/status_available.txt`,
      'whois.dns.hr': `${W}/whois.dns.hr/hr/status_available.txt`,
      'whois.in.ua': `${W}/whois.in.ua/in.ua/status_available.txt`,
      'whois.isnic.is': `${W}/whois.isnic.is/is/status_available.txt`,
      'whois.isoc.org.il': `${W}/whois.isoc.org.il/il/property_status_missing.txt`,
      'whois.nc': `${W}/whois.nc/nc/status_available.txt`,
      'whois.nic.cz': `${W}/whois.nic.cz/cz/status_available.txt`,
      'whois.nic.dz': `${W}/whois.nic.dz/dz/status_available.txt`,
      'whois.nic.fo': `${W}/whois.nic.fo/fo/status_available.txt`,
      'whois.nic.fr': `${W}/whois.nic.fr/fr/property_status_missing.txt`,
      'whois.nic.ir': `${W}/whois.nic.ir/ir/status_available.txt`,
      'whois.nic.pm': `${W}/whois.nic.pm/pm/status_available.txt`,
      'whois.nic.priv.at': `${W}/whois.nic.priv.at/at/status_available.txt`,
      'whois.nic.re': `${W}/whois.nic.re/re/status_available.txt`,
      'whois.nic.sm': `${W}/whois.nic.sm/sm/status_available.txt`,
      'whois.nic.st': `${W}/whois.nic.st/st/status_available.txt`,
      'whois.nic.wf': `${W}/whois.nic.wf/wf/status_available.txt`,
      'whois.register.si': `${W}/whois.register.si/si/status_available.txt`,
      'whois.registry.om': `${W}/whois.registry.om/om/status_available.txt`,
      'whois.registry.qa': `${W}/whois.registry.qa/qa/status_available.txt`,
      'whois.rotld.ro': `${W}/whois.rotld.ro/ro/status_available.txt`,
      'whois.tcinet.ru': `${W}/whois.tcinet.ru/ru/status_available.txt`,
      'whois.tznic.or.tz': `${W}/whois.tznic.or.tz/tz/status_available.txt`,
      'whois.ua': `${W}/whois.ua/ua/uaepp/status_available.txt`,
    },
  },
  {
    pattern: /^(?:unfortunately, )?no (?:records? matching|results were found|domain records were found|data was found to match)\b/im,
    servers: {
      'whois.ax': `${W}/whois.ax/ax/status_available.txt`,
      'whois.co.pl': `${W}/whois.co.pl/co.pl/status_available.txt`,
      'whois.isoc.org.il': `${W}/whois.isoc.org.il/il/property_status_missing.txt`,
      'whois.nic.bj': `${W}/whois.nic.bj/bj/status_available.txt`,
      'whois.nic.coop': `${W}/whois.nic.coop/coop/status_available.txt`,
    },
  },
  {
    // KISA's answer since its old `not registered to KRNIC`: `The requested domain was not found in
    // the Registry or Registrar’s WHOIS Server.` (test/fixtures/whois/kisa; no corpus copy).
    pattern: /^(?:domain |object )?not found\b|\bnot found(?: in database)?[.!]*$|^no found$|\bobject_not_found\b|\bwas not found in the registry\b/im,
    servers: {
      'ccwhois.ksregistry.net': `${W}/ccwhois.ksregistry.net/vg/status_available.txt`,
      'whois.afilias-grs.info': `${W}/whois.afilias-grs.info/bz/status_available.txt`,
      'whois.afilias.net': `${W}/whois.afilias.net/info/status_available.txt`,
      'whois.ati.tn': `${W}/whois.ati.tn/tn/status_available.txt`,
      'whois.bnnic.bn': `${W}/whois.bnnic.bn/bn/status_available.txt`,
      'whois.cat': `${W}/whois.cat/cat/status_available.txt`,
      'whois.cctld.uz': `${W}/whois.cctld.uz/uz/status_available.txt`,
      'whois.centralnic.com': `${W}/whois.centralnic.com/ae.org/status_available.txt`,
      'whois.donuts.co': `${W}/whois.donuts.co/bike/status_available.txt`,
      'whois.dotmobiregistry.net': `${W}/whois.dotmobiregistry.net/mobi/status_available.txt`,
      'whois.dotpostregistry.net': `${W}/whois.dotpostregistry.net/post/status_available.txt`,
      'whois.eenet.ee': `${W}/whois.eenet.ee/ee/status_available.txt`,
      'whois.eu.org': `${W}/whois.eu.org/eu.org/status_available.txt`,
      'whois.fi': `${W}/whois.fi/fi/status_available.txt`,
      'whois.iis.nu': `${W}/whois.iis.nu/nu/status_available.txt`,
      'whois.iis.se': `${W}/whois.iis.se/se/status_available.txt`,
      'whois.inregistry.net': `${W}/whois.inregistry.net/in/property_status_missing.txt`,
      'whois.museum': `${W}/whois.museum/museum/status_available.txt`,
      'whois.nic.ac': `${W}/whois.nic.ac/ac/status_available.txt`,
      'whois.nic.ag': `${W}/whois.nic.ag/ag/status_available.txt`,
      'whois.nic.as': `${W}/whois.nic.as/as/status_available.txt`,
      'whois.nic.asia': `${W}/whois.nic.asia/asia/status_available.txt`,
      'whois.nic.ci': `${W}/whois.nic.ci/ci/status_available.txt`,
      'whois.nic.co': `${W}/whois.nic.co/co/status_available.txt`,
      'whois.nic.college': `${W}/whois.nic.college/college/status_available.txt`,
      'whois.nic.design': `${W}/whois.nic.design/design/status_available.txt`,
      'whois.nic.dm': `${W}/whois.nic.dm/dm/status_available.txt`,
      'whois.nic.fm': `${W}/whois.nic.fm/fm/status_available.txt`,
      'whois.nic.gd': `${W}/whois.nic.gd/gd/status_available.txt`,
      'whois.nic.im': `${W}/whois.nic.im/im/status_available.txt`,
      'whois.nic.io': `${W}/whois.nic.io/io/status_available.txt`,
      'whois.nic.la': `${W}/whois.nic.la/la/status_available.txt`,
      'whois.nic.ly': `${W}/whois.nic.ly/ly/status_available.txt`,
      'whois.nic.me': `${W}/whois.nic.me/me/status_available.txt`,
      'whois.nic.mx': `${W}/whois.nic.mx/mx/status_available.txt`,
      'whois.nic.pw': `${W}/whois.nic.pw/pw/status_available.txt`,
      'whois.nic.sh': `${W}/whois.nic.sh/sh/status_available.txt`,
      'whois.nic.sl': `${W}/whois.nic.sl/sl/status_available.txt`,
      'whois.nic.sn': `${W}/whois.nic.sn/sn/status_available.txt`,
      'whois.nic.so': `${W}/whois.nic.so/so/status_available.txt`,
      'whois.nic.space': `${W}/whois.nic.space/space/status_available.txt`,
      'whois.nic.tech': `${W}/whois.nic.tech/tech/status_available.txt`,
      'whois.nic.tel': `${W}/whois.nic.tel/tel/status_available.txt`,
      'whois.nic.travel': `${W}/whois.nic.travel/travel/status_available.txt`,
      'whois.nic.us': `${W}/whois.nic.us/us/status_available.txt`,
      'whois.nic.xxx': `${W}/whois.nic.xxx/xxx/status_available.txt`,
      'whois.nic.xyz': `${W}/whois.nic.xyz/xyz/status_available.txt`,
      'whois.pandi.or.id': `${W}/whois.pandi.or.id/id/status_available.txt`,
      'whois.pir.org': `${W}/whois.pir.org/org/status_available.txt`,
      'whois.registry.hm': `${W}/whois.registry.hm/hm/status_available.txt`,
      'whois.sgnic.sg': `${W}/whois.sgnic.sg/sg/status_available.txt`,
      'whois.sk-nic.sk': `${W}/whois.sk-nic.sk/sk/status_available.txt`,
      'whois.tld.ee': `${W}/whois.tld.ee/ee/status_available.txt`,
      'whois.twnic.net.tw': `${W}/whois.twnic.net.tw/tw/status_available.txt`,
      'whois.usp.ac.fj': `${W}/whois.usp.ac.fj/fj/status_available.txt`,
    },
  },
  {
    pattern: /\bno (?:such domain|objects? found|data found|entries found)\b/im,
    servers: {
      'whois.aeda.net.ae': `${W}/whois.aeda.net.ae/ae/status_available.txt`,
      'whois.audns.net.au': `${W}/whois.audns.net.au/au/status_available.txt`,
      'whois.biz': `${W}/whois.biz/biz/status_available.txt`,
      'whois.cmc.iq': `${W}/whois.cmc.iq/iq/status_available.txt`,
      'whois.co.ug': `${W}/whois.co.ug/ug/status_available.txt`,
      'whois.dk-hostmaster.dk': `${W}/whois.dk-hostmaster.dk/dk/status_available.txt`,
      'whois.dns.hr': `${W}/whois.dns.hr/hr/status_available.txt`,
      'whois.dns.lu': `${W}/whois.dns.lu/lu/status_available.txt`,
      'whois.isnic.is': `${W}/whois.isnic.is/is/status_available.txt`,
      'whois.ja.net': `${W}/whois.ja.net/ac.uk/status_available.txt`,
      'whois.na-nic.com.na': `${W}/whois.na-nic.com.na/na/status_available.txt`,
      'whois.nc': `${W}/whois.nc/nc/status_available.txt`,
      'whois.nic.af': `${W}/whois.nic.af/af/status_available.txt`,
      'whois.nic.cx': `${W}/whois.nic.cx/cx/status_available.txt`,
      'whois.nic.cz': `${W}/whois.nic.cz/cz/status_available.txt`,
      'whois.nic.dz': `${W}/whois.nic.dz/dz/status_available.txt`,
      'whois.nic.fo': `${W}/whois.nic.fo/fo/status_available.txt`,
      'whois.nic.fr': `${W}/whois.nic.fr/fr/property_status_missing.txt`,
      'whois.nic.gl': `${W}/whois.nic.gl/gl/status_available.txt`,
      'whois.nic.gs': `${W}/whois.nic.gs/gs/status_available.txt`,
      'whois.nic.hn': `${W}/whois.nic.hn/hn/status_available.txt`,
      'whois.nic.ht': `${W}/whois.nic.ht/ht/status_available.txt`,
      'whois.nic.ir': `${W}/whois.nic.ir/ir/status_available.txt`,
      'whois.nic.ki': `${W}/whois.nic.ki/ki/status_available.txt`,
      'whois.nic.ms': `${W}/whois.nic.ms/ms/status_available.txt`,
      'whois.nic.mu': `${W}/whois.nic.mu/mu/status_available.txt`,
      'whois.nic.nf': `${W}/whois.nic.nf/nf/status_available.txt`,
      'whois.nic.pm': `${W}/whois.nic.pm/pm/status_available.txt`,
      'whois.nic.priv.at': `${W}/whois.nic.priv.at/at/status_available.txt`,
      'whois.nic.re': `${W}/whois.nic.re/re/status_available.txt`,
      'whois.nic.sm': `${W}/whois.nic.sm/sm/status_available.txt`,
      'whois.nic.st': `${W}/whois.nic.st/st/status_available.txt`,
      'whois.nic.tc': `${W}/whois.nic.tc/tc/status_available.txt`,
      'whois.nic.tl': `${W}/whois.nic.tl/tl/status_available.txt`,
      'whois.nic.wf': `${W}/whois.nic.wf/wf/status_available.txt`,
      'whois.register.si': `${W}/whois.register.si/si/status_available.txt`,
      'whois.registre.ma': `${W}/whois.registre.ma/ma/status_available.txt`,
      'whois.registry.gy': `${W}/whois.registry.gy/gy/status_available.txt`,
      'whois.registry.om': `${W}/whois.registry.om/om/status_available.txt`,
      'whois.registry.qa': `${W}/whois.registry.qa/qa/status_available.txt`,
      'whois.rotld.ro': `${W}/whois.rotld.ro/ro/status_available.txt`,
      'whois.tcinet.ru': `${W}/whois.tcinet.ru/ru/status_available.txt`,
      'whois.tznic.or.tz': `${W}/whois.tznic.or.tz/tz/status_available.txt`,
      'whois.ua': `${W}/whois.ua/ua/uaepp/status_available.txt`,
      'whois.za.net': `${W}/whois.za.net/za.net/status_available.txt`,
      'whois.za.org': `${W}/whois.za.org/za.org/status_available.txt`,
      'whois1.nic.bi': `${W}/whois1.nic.bi/bi/status_available.txt`,
    },
  },
  {
    pattern:
      /^(?:domain )?status:\s*(?:free|available|not registered|no object found|invalid|not allowed|unassignable|reserved|premium name|unavailable|this whois server does not have any records)\b/im,
    servers: {
      'kero.yachay.pe': `${W}/kero.yachay.pe/pe/status_available.txt`,
      'whois.cira.ca': `${W}/whois.cira.ca/ca/property_status_available.txt`,
      'whois.cmc.iq': `${W}/whois.cmc.iq/iq/status_available.txt`,
      'whois.denic.de': `${W}/whois.denic.de/de/status_available.txt`,
      'whois.dns.be': `${W}/whois.dns.be/be/property_status_available.txt`,
      'whois.domreg.lt': `${W}/whois.domreg.lt/lt/status_available.txt`,
      'whois.eu': `${W}/whois.eu/eu/status_available.txt`,
      'whois.gg': `${W}/whois.gg/gg/status_available.txt`,
      'whois.je': `${W}/whois.je/je/status_available.txt`,
      'whois.kenic.or.ke': `${W}/whois.kenic.or.ke/ke/status_available.txt`,
      'whois.na-nic.com.na': `${W}/whois.na-nic.com.na/na/status_available.txt`,
      'whois.netcom.cm': `${W}/whois.netcom.cm/cm/status_available.txt`,
      'whois.nic.af': `${W}/whois.nic.af/af/status_available.txt`,
      'whois.nic.cd': `${W}/whois.nic.cd/cd/status_available.txt`,
      'whois.nic.cx': `${W}/whois.nic.cx/cx/status_available.txt`,
      'whois.nic.ec': `${W}/whois.nic.ec/ex/status_available.txt`,
      'whois.nic.gl': `${W}/whois.nic.gl/gl/status_available.txt`,
      'whois.nic.gs': `${W}/whois.nic.gs/gs/property_status_available.txt`,
      'whois.nic.hn': `${W}/whois.nic.hn/hn/status_available.txt`,
      'whois.nic.ht': `${W}/whois.nic.ht/ht/status_available.txt`,
      'whois.nic.it': `${W}/whois.nic.it/it/property_status_available.txt`,
      'whois.nic.ki': `${W}/whois.nic.ki/ki/status_available.txt`,
      'whois.nic.lv': `${W}/whois.nic.lv/lv/status_available.txt`,
      'whois.nic.mg': `${W}/whois.nic.mg/mg/status_available.txt`,
      'whois.nic.ms': `${W}/whois.nic.ms/ms/status_available.txt`,
      'whois.nic.mu': `${W}/whois.nic.mu/mu/status_available.txt`,
      'whois.nic.net.ng': `${W}/whois.nic.net.ng/ng/property_status_available.txt`,
      'whois.nic.net.sb': `${W}/whois.nic.net.sb/sb/property_status_available.txt`,
      'whois.nic.nf': `${W}/whois.nic.nf/nf/status_available.txt`,
      'whois.nic.tc': `${W}/whois.nic.tc/tc/status_available.txt`,
      'whois.nic.tl': `${W}/whois.nic.tl/tl/status_available.txt`,
      'whois.pnina.ps': `${W}/whois.pnina.ps/ps/status_available.txt`,
      'whois.registry.gy': `${W}/whois.registry.gy/gy/status_available.txt`,
      'whois.sx': `${W}/whois.sx/sx/property_status_premium_name.txt`,
      'whois.tld.sy': `${W}/whois.tld.sy/sy/status_available.txt`,
      'whois1.nic.bi': `${W}/whois1.nic.bi/bi/status_available.txt`,
    },
  },
  {
    pattern: /^available$|\bis (?:free|available(?: for (?:registration|purchase))?)\.?$|^query_status:\s*220 available\b/im,
    servers: {
      'capetown-whois.registry.net.za': `${W}/capetown-whois.registry.net.za/capetown/status_available.txt`,
      'coza-whois.registry.net.za': `${W}/coza-whois.registry.net.za/co.za/status_available.txt`,
      'durban-whois.registry.net.za': `${W}/durban-whois.registry.net.za/durban/status_available.txt`,
      'joburg-whois.registry.net.za': `${W}/joburg-whois.registry.net.za/joburg/status_available.txt`,
      'org-whois.registry.net.za': `${W}/org-whois.registry.net.za/org.za/status_available.txt`,
      'whois.co.ca': `${W}/whois.co.ca/co.ca/status_available.txt`,
      'whois.domain-registry.nl': `${W}/whois.domain-registry.nl/nl/status_available.txt`,
      'whois.kg': `${W}/whois.kg/kg/status_available.txt`,
      'whois.nic.tm': `${W}/whois.nic.tm/tm/status_available.txt`,
      'whois.srs.net.nz': `${W}/whois.srs.net.nz/nz/status_available.txt`,
      'whois.uniregistry.net': `${W}/whois.uniregistry.net/tattoo/status_available.txt`,
    },
  },
  {
    pattern: /\b(?:does not exist|not registered|not registred|has not been registered|no existe|domain name not known)\b/im,
    servers: {
      'kero.yachay.pe': `${W}/kero.yachay.pe/pe/status_available.txt`,
      'whois.cctld.by': `${W}/whois.cctld.by/by/status_available.txt`,
      'whois.domainregistry.ie': `${W}/whois.domainregistry.ie/ie/status_available.txt`,
      'whois.dot.cf': `${W}/whois.dot.cf/cf/status_available.txt`,
      'whois.dot.tk': `${W}/whois.dot.tk/tk/status_available.txt`,
      'whois.hkirc.hk': `${W}/whois.hkirc.hk/hk/status_available.txt`,
      'whois.je': `${W}/whois.je/je/status_available.txt`,
      'whois.kenic.or.ke': `${W}/whois.kenic.or.ke/ke/status_available.txt`,
      'whois.kr': `${W}/whois.kr/kr/status_available.txt`,
      'whois.mynic.my': `${W}/whois.mynic.my/my/status_available.txt`,
      'whois.netcom.cm': `${W}/whois.netcom.cm/cm/status_available.txt`,
      'whois.nic.ai': `${W}/whois.nic.ai/ai/status_available.txt`,
      'whois.nic.cl': `${W}/whois.nic.cl/cl/status_available.txt`,
      'whois.nic.ec': `${W}/whois.nic.ec/ex/status_available.txt`,
      'whois.nic.fm': `${W}/whois.nic.fm/fm/status_available.txt`,
      'whois.nic.pr': `${W}/whois.nic.pr/pr/status_available.txt`,
      'whois.nic.uk': `${W}/whois.nic.uk/uk/property_status_missing.txt`,
      'whois.register.bg': `${W}/whois.register.bg/bg/status_available.txt`,
      'whois.rnids.rs': `${W}/whois.rnids.rs/rs/status_available.txt`,
    },
  },
  {
    pattern:
      /^\W*nothing found\b|^no information available about domain name\b|\bthere is no information available on the domain\b|\bwe do not have an entry in our database matching your query\b|\bnot available in our whois database\b|\bthis server does not have\s+any data for\b/im,
    servers: {
      'whois.dns.pl': `${W}/whois.dns.pl/pl/status_available.txt`,
      'whois.iana.org': `${W}/whois.iana.org/int/status_available.txt`,
      'whois.nic.at': `${W}/whois.nic.at/at/status_available.txt`,
      'whois.nic.ch': `${W}/whois.nic.ch/ch/status_available.txt`,
      'whois.nic.es': `${W}/whois.nic.es/es/status_available.txt`,
      'whois.nic.kz': `${W}/whois.nic.kz/kz/property_status_missing.txt`,
      'whois.nic.li': `${W}/whois.nic.li/li/status_available.txt`,
      'whois.nic.lk': `${W}/whois.nic.lk/lk/status_available.txt`,
    },
  },
  {
    pattern:
      /^(?:name is )?reserved by\b|^restricted\b|^name is restricted from registration\b|^domain not available\.?$|\bis not available or is reserved by the registry\b|\bdomain you requested is (?:in the reserved list|prohibited)\b|\bcannot be registered because it contravenes\b|^organisation:\s*not assigned$|^\[status\]\s+reserved$/im,
    servers: {
      'whois.afilias.net': `${W}/whois.afilias.net/info/status_reserved.txt`,
      'whois.cnnic.cn': `${W}/whois.cnnic.cn/cn/property_status_reserved_list.txt`,
      'whois.co.ca': `${W}/whois.co.ca/co.ca/status_reserved.txt`,
      'whois.fi': `${W}/whois.fi/fi/status_reserved.txt`,
      'whois.iana.org': `${W}/whois.iana.org/tld/status_not_assigned.txt`,
      'whois.jprs.jp': `${W}/whois.jprs.jp/jp/status_reserved.txt`,
      'whois.nic.asia': `${W}/whois.nic.asia/asia/status_reserved.txt`,
      'whois.nic.at': `${W}/whois.nic.at/at/status_available.txt`,
      'whois.nic.gd': `${W}/whois.nic.gd/gd/status_reserved.txt`,
      'whois.nic.io': `${W}/whois.nic.io/io/status_reserved.txt`,
      'whois.nic.uk': `${W}/whois.nic.uk/uk/status_invalid.txt`,
      'whois.nic.xxx': `${W}/whois.nic.xxx/xxx/status_reserved.txt`,
      'whois.registry.om': `${W}/whois.registry.om/om/status_reserved.txt`,
    },
  },
];

/** The answer's lines without comment markers and leading blanks (see the header). */
export function stripMarkers(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/^[ \t]*(?:%+|#+|>>>|\*+)?[ \t-]*/gm, '');
}

/** True when the answer says, in one of the collected forms, that nobody holds the name. */
export function saysNotFound(text: string): boolean {
  const lines = stripMarkers(text);
  return NOT_FOUND.some((form) => form.pattern.test(lines));
}

/** The refusal the answer states, with its line (printable, at most 100 characters) for the message. */
export function refusalIn(text: string): { kind: RefusalKind; line: string } | null {
  const lines = stripMarkers(text);
  for (const form of REFUSED) {
    const match = form.pattern.exec(lines);
    if (!match) continue;
    const start = lines.lastIndexOf('\n', match.index) + 1;
    const end = lines.indexOf('\n', match.index);
    const line = lines
      .slice(start, end < 0 ? undefined : end)
      .replace(/[^\x20-\x7e]/g, '?')
      .trim()
      .slice(0, 100);
    return { kind: form.kind, line };
  }
  return null;
}
