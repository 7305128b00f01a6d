/**
 * Hostile requests for the fuzz run, one route at a time: the route's own parameters (from the
 * OpenAPI document: query, path, header and JSON body fields) filled half the time with values
 * that reach an upstream (a fresh domain under a TLD the hostile RDAP and WHOIS servers answer,
 * a public IP the hostile DNS answers for, a hostile TLS port) and half the time with hostile
 * text (a catalogue of classics, and fast-check's arbitrary strings and JSON); plus wrong
 * methods, wrong content types, bodies that are not JSON, missing or foreign keys.
 */
import fc from 'fast-check';
import type { Random } from './random.js';

export interface FuzzRoute {
  method: string;
  /** The OpenAPI path, `/v1/whois/lookup/{domain}`. */
  path: string;
  /** Parameters by where they go. */
  query: string[];
  pathParams: string[];
  headers: string[];
  /** JSON body fields (POST). */
  body: string[];
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface Credentials {
  /** A secret key of every product, by product id. */
  secret: Record<string, string>;
  /** A public key of every product. */
  public: Record<string, string>;
  siteKey: string;
  siteSecret: string;
}

export interface UpstreamTargets {
  /** Ports of the hostile TLS servers on 127.0.0.1. */
  tlsPorts: number[];
}

const NASTY = [
  '',
  ' ',
  '\u0000',
  '%00',
  '%',
  '%zz',
  '../../../../etc/passwd',
  '..',
  '.',
  'a'.repeat(300),
  'a'.repeat(70_000),
  '😀😀😀',
  '\uD800',
  '\uFEFF',
  'ＡＢＣ.com',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, a literal string on purpose
  '${jndi:ldap://127.0.0.1/a}',
  '__proto__',
  'constructor',
  'toString',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  'true',
  'null',
  '[]',
  '{}',
  '127.0.0.1',
  '0.0.0.0',
  '255.255.255.255',
  '::1',
  '::ffff:127.0.0.1',
  '[::1]',
  '0x7f.1',
  '017700000001',
  '999.999.999.999',
  '1.2.3',
  'fe80::1%eth0',
  'localhost',
  'com',
  'xn--',
  'xn--zz.com',
  'xn--80ak6aa92e.com',
  '-a-.com',
  'a..com',
  'a.com.',
  `${'a'.repeat(64)}.com`,
  `${'a.'.repeat(130)}com`,
  'http://example.com/path?x=1',
  'https://user:pass@127.0.0.1:443/',
  'user@',
  '@',
  'a@b',
  '"a b"@example.com',
  'a@[127.0.0.1]',
  'a@xn--zz.com',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'A94A8FE5CCB19BA61C4C0873D391E987982FBBD3',
  'ZZZZZ',
  'github',
  'phone',
  'crypto',
  '+1 (555) 0100',
  'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
];

const TLDS = ['com', 'net', 'org', 'xyz', 'io'];

function label(random: Random): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: 3 + random.int(12) }, () => letters[random.int(letters.length)]).join('');
}

/** A name no cache has seen, under a TLD the hostile upstreams answer. */
function freshDomain(random: Random): string {
  return `${random.chance(0.2) ? `${label(random)}.` : ''}${label(random)}.${random.pick(TLDS)}`;
}

function publicIp(random: Random): string {
  return random.chance(0.8)
    ? `${random.pick([8, 1, 45, 91, 104, 140, 185, 203])}.${random.int(256)}.${random.int(256)}.${random.int(256)}`
    : `2001:${(0x4000 + random.int(0x1000)).toString(16)}::${random.int(65_536).toString(16)}`;
}

/**
 * Built once: a new string arbitrary builds its own lookup tables on first use, which cost more
 * than the request it fed (1.3 s of the fuzz slice's 10 s).
 */
const ANY_TEXT = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ maxLength: 20 }));
const ANY_JSON = fc.jsonValue({ maxDepth: 3 });

function hostileText(random: Random): string {
  if (random.chance(0.5)) return random.pick(NASTY);
  return fc.sample(ANY_TEXT, { seed: random.int(2 ** 31), numRuns: 1 })[0];
}

/** A value for parameter `name`: one that reaches an upstream, or a hostile one. */
function valueFor(random: Random, name: string, targets: UpstreamTargets, credentials: Credentials): string {
  if (random.chance(0.4)) return hostileText(random);
  switch (name) {
    case 'domain':
      return freshDomain(random);
    case 'email':
      return `${random.pick(['info', 'a.b+c', 'admin', label(random)])}@${freshDomain(random)}`;
    case 'ip':
    case 'remoteip':
      return publicIp(random);
    case 'host':
      return random.chance(0.8) ? `127.0.0.1:${random.pick(targets.tlsPorts)}` : freshDomain(random);
    case 'port':
      return String(random.pick(targets.tlsPorts));
    case 'prefix':
      return random.int(0x100000).toString(16).padStart(5, '0').toUpperCase();
    case 'sha1':
      return Buffer.from(random.bytes(20)).toString('hex');
    case 'sitekey':
      return credentials.siteKey;
    case 'secret':
      return credentials.siteSecret;
    case 'hostname':
      return random.pick(['example.com', 'fuzz.test', '127.0.0.1']);
    case 'type':
      return random.pick(['phone', 'email', 'url', 'domain', 'crypto', 'iban', 'ip']);
    case 'value':
      return random.pick([
        freshDomain(random),
        publicIp(random),
        `http://${freshDomain(random)}/login`,
        '+15550100',
        'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      ]);
    case 'provider':
      return random.pick(['github', 'stripe', 'slack']);
    case 'file':
      return random.pick(['api.js', 'frame.html', 'worker.js', 'widget.css']);
    case 'mode':
      return random.pick(['sha1', 'SHA1', 'ntlm']);
    case 'category':
      return random.pick(['phishing', 'scam', 'fraud', 'spam', 'other']);
    case 'puzzle_type':
      return random.pick(['pow', 'slider', 'random']);
    case 'region':
      return random.pick(['US', 'GB', 'de']);
    case 'password':
      return random.pick(['password', '123456', label(random)]);
    default:
      return hostileText(random);
  }
}

/** A JSON value in place of a string field: mostly the field's value, sometimes any JSON. */
function jsonValueFor(random: Random, name: string, targets: UpstreamTargets, credentials: Credentials): unknown {
  if (random.chance(0.15)) return fc.sample(ANY_JSON, { seed: random.int(2 ** 31), numRuns: 1 })[0];
  return valueFor(random, name, targets, credentials);
}

/** The name of a batch route's inputs (`ip`, `domain`, ...). */
function batchInputName(path: string): string {
  const product = path.split('/')[2];
  const names: Record<string, string> = {
    useragent: 'ua',
    emailauth: 'domain',
    emailval: 'email',
    whois: 'domain',
    domainrep: 'domain',
    tls: 'host',
    pwbreach: 'sha1',
  };
  return names[product] ?? 'ip';
}

const BODY_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/json; charset=latin1',
  '',
];

export function fuzzRequest(random: Random, route: FuzzRoute, targets: UpstreamTargets, credentials: Credentials): FuzzRequest {
  const product = route.path.split('/')[2] ?? '';
  const headers: Record<string, string> = {};
  const auth = random.next();
  if (auth < 0.85)
    headers.authorization = `Bearer ${route.method === 'GET' && route.path.endsWith('/status') ? credentials.public[product] : credentials.secret[product]}`;
  else if (auth < 0.9) headers.authorization = `Bearer ${random.pick(Object.values(credentials.secret))}`;
  else if (auth < 0.95) headers.authorization = `Bearer ${hostileText(random).replace(/[^\x20-\x7e]/g, '')}`;

  let path = route.path;
  for (const name of route.pathParams) {
    // Mostly encoded; sometimes raw percent-escapes that decode to nothing valid.
    const value = random.chance(0.05)
      ? random.pick(['%zz', '%C0%AF', '%ED%A0%80', '%00', '%2e%2e%2f', '%FF%FE'])
      : encodeURIComponent(wellFormed(valueFor(random, name, targets, credentials))).slice(0, 8_000);
    path = path.replace(`{${name}}`, value);
  }
  const query = new URLSearchParams();
  for (const name of route.query) if (random.chance(0.8)) query.append(name, valueFor(random, name, targets, credentials).slice(0, 8_000));
  if (random.chance(0.1)) query.append(hostileText(random).slice(0, 50), hostileText(random).slice(0, 50));
  for (const name of route.headers) if (random.chance(0.5)) headers[name.toLowerCase()] = random.pick(['true', 'false', '1', '']);
  // scamrisk: a type and a value that go together, half the time, so that assessments run.
  const pair = random.chance(0.5) ? coherentPair(random) : null;
  if (pair && query.has('type') && query.has('value')) {
    query.set('type', pair[0]);
    query.set('value', pair[1]);
  }
  const search = query.toString();

  let method = route.method;
  if (random.chance(0.03)) method = random.pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'POST', 'GET']);
  let body: Buffer | undefined;
  if (method === 'POST') {
    headers['content-type'] = random.pick(BODY_TYPES);
    const shape = random.next();
    if (shape < 0.75) {
      const fields = route.body.length > 0 ? route.body : route.path.includes('assess') ? ['type', 'value', 'region'] : [];
      const object: Record<string, unknown> = {};
      for (const name of fields)
        if (random.chance(0.85))
          object[name] =
            name === 'inputs' ? batchInputs(random, batchInputName(route.path), targets, credentials) : jsonValueFor(random, name, targets, credentials);
      if (pair && 'type' in object && 'value' in object) [object.type, object.value] = pair;
      body = Buffer.from(JSON.stringify(object));
    } else if (shape < 0.9) {
      body = Buffer.from(JSON.stringify(fc.sample(fc.jsonValue({ maxDepth: 4 }), { seed: random.int(2 ** 31), numRuns: 1 })[0]) ?? 'null');
    } else {
      body = random.chance(0.5)
        ? random.bytes(random.int(2_000))
        : Buffer.from(random.pick(['{', '{"inputs":', '[', '{"a":1}{"b":2}', '\u0000', '{"__proto__":{"x":1}}', `${'['.repeat(10_000)}`]));
    }
  }
  return { method, url: search ? `${path}?${search}` : path, headers, body };
}

function coherentPair(random: Random): [string, string] {
  return random.pick<[string, string]>([
    ['email', `info@${freshDomain(random)}`],
    ['phone', random.pick(['+14155550100', '+442079460000', '0044 20 7946 0000'])],
    ['ip', publicIp(random)],
    ['domain', freshDomain(random)],
    ['url', `http://${freshDomain(random)}/login?next=%2F`],
    ['crypto', random.pick(['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', '0x52908400098527886E0F7030069857D2E4169EE7'])],
    ['username', random.pick(['bob', '@scammer', 'a'.repeat(100)])],
    ['address', '1 Main St, Springfield'],
  ]);
}

/** Lone surrogates as U+FFFD: encodeURIComponent refuses them (the server sees U+FFFD's bytes either way). */
function wellFormed(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

function batchInputs(random: Random, name: string, targets: UpstreamTargets, credentials: Credentials): unknown {
  if (random.chance(0.1)) return fc.sample(fc.jsonValue({ maxDepth: 2 }), { seed: random.int(2 ** 31), numRuns: 1 })[0];
  return Array.from({ length: random.pick([0, 1, 2, 5, 10, 25, 101]) }, () => jsonValueFor(random, name, targets, credentials));
}
