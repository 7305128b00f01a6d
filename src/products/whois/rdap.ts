/**
 * An RDAP domain object (RFC 9083) into a RegistrationRecord:
 * - events: `registration` -> created, `expiration` -> expires, `last changed` -> updated
 *   (MarkMonitor's `last update` when there is no `last changed`); `last update of RDAP
 *   database` is about the server, not the domain, and is ignored.
 * - status: RDAP's values mapped to the EPP codes they stand for (RFC 8056 section 2:
 *   `client transfer prohibited` -> `clientTransferProhibited`, `active` -> `ok`,
 *   `associated` -> `linked`), so results read the same whether RDAP or WHOIS answered; a value
 *   with no EPP code (`locked`, `validated`, a registry's own) is kept as given, one over 128
 *   characters not at all (record.ts: no status is that long).
 * - nameservers: each `ldhName`, lower case, no trailing dot.
 * - registrar: the entity with role `registrar`: its jCard `fn`, else its `org`, else its
 *   handle when that is a name (`REG-INTERNET-CZ`), not a bare number (IANA IDs such as `292`
 *   are identifiers, not names). Redacted values are absent, and so is one over 256 characters
 *   (the next of fn, org and handle is tried).
 * - the registrar's RDAP link: `links` with rel `related` and type `application/rdap+json`, an
 *   http(s) URL that parses (one that does not is skipped, never followed).
 * Malformed parts (a `vcardArray` that is an object, a misspelt `nameServers`) are skipped,
 * never guessed at; a JSON document that is not a domain object at all is refused.
 */
import { parseRegistryDate } from './dates.js';
import { addUnique, emptyRecord, hostnameOf, keptRegistrar, MAX_HOSTNAME_LENGTH, MAX_STATUS_LENGTH, shownValue, type RegistrationRecord } from './record.js';

export interface RdapDomainAnswer {
  record: RegistrationRecord;
  /** The object's `ldhName`, lower case, no trailing dot; null when absent. */
  name: string | null;
  /** The registrar's RDAP URL for this domain, when the registry links to it. */
  registrarLink: string | null;
}

/** RFC 8056 section 2: RDAP status -> EPP status. */
const RDAP_TO_EPP: Readonly<Record<string, string>> = {
  'add period': 'addPeriod',
  'auto renew period': 'autoRenewPeriod',
  'client delete prohibited': 'clientDeleteProhibited',
  'client hold': 'clientHold',
  'client renew prohibited': 'clientRenewProhibited',
  'client transfer prohibited': 'clientTransferProhibited',
  'client update prohibited': 'clientUpdateProhibited',
  inactive: 'inactive',
  associated: 'linked',
  active: 'ok',
  'pending create': 'pendingCreate',
  'pending delete': 'pendingDelete',
  'pending renew': 'pendingRenew',
  'pending restore': 'pendingRestore',
  'pending transfer': 'pendingTransfer',
  'pending update': 'pendingUpdate',
  'redemption period': 'redemptionPeriod',
  'renew period': 'renewPeriod',
  'server delete prohibited': 'serverDeleteProhibited',
  'server hold': 'serverHold',
  'server renew prohibited': 'serverRenewProhibited',
  'server transfer prohibited': 'serverTransferProhibited',
  'server update prohibited': 'serverUpdateProhibited',
  'transfer period': 'transferPeriod',
};

/** The EPP code of an RDAP status value, or the value as given when it has none. */
export function eppStatus(value: string): string {
  return RDAP_TO_EPP[value.trim().toLowerCase().replace(/\s+/g, ' ')] ?? value.trim();
}

/** Thrown for a JSON document that is not an RDAP domain object. */
export class NotADomainObject extends Error {}

/** Read an RDAP domain answer; throws NotADomainObject for anything else (an error or help object, a search result). */
export function readRdapDomain(json: unknown): RdapDomainAnswer {
  if (!isObject(json)) throw new NotADomainObject('the answer is not a JSON object');
  const className = json.objectClassName;
  if (typeof className === 'string' ? className.toLowerCase() !== 'domain' : !('ldhName' in json || 'events' in json)) {
    throw new NotADomainObject(
      `the answer is not a domain object${typeof className === 'string' ? ` (objectClassName ${JSON.stringify(className.slice(0, 32))})` : ''}`,
    );
  }
  const record = emptyRecord();

  let lastUpdate: number | null = null;
  for (const event of arrayOf(json.events)) {
    if (!isObject(event) || typeof event.eventAction !== 'string' || typeof event.eventDate !== 'string') continue;
    const instant = parseRegistryDate(event.eventDate);
    if (instant === null) continue;
    const action = event.eventAction.trim().toLowerCase();
    if (action === 'registration') record.createdAt ??= instant;
    else if (action === 'expiration') record.expiresAt ??= instant;
    else if (action === 'last changed') record.updatedAt ??= instant;
    else if (action === 'last update') lastUpdate ??= instant;
  }
  record.updatedAt ??= lastUpdate;

  for (const value of arrayOf(json.status)) {
    if (typeof value === 'string' && value.trim() !== '') addUnique(record.status, eppStatus(value), MAX_STATUS_LENGTH);
  }
  for (const server of arrayOf(json.nameservers)) {
    if (!isObject(server)) continue;
    const host = typeof server.ldhName === 'string' ? hostnameOf(server.ldhName) : null;
    if (host) addUnique(record.nameservers, host, MAX_HOSTNAME_LENGTH);
  }
  record.registrar = registrarName(arrayOf(json.entities));
  const name = typeof json.ldhName === 'string' ? json.ldhName.trim().toLowerCase().replace(/\.$/, '') : null;
  return { record, name, registrarLink: registrarLink(arrayOf(json.links)) };
}

/** How deep registrarEntities looks into entities held by entities (RFC 9083 5.1 lets them nest). */
const ENTITY_DEPTH = 3;
/** Entities registrarEntities looks at, at most: a real answer has a handful; a hostile one may list 100,000s. */
const MAX_ENTITIES = 1_000;

/**
 * The registrar entities of a domain, the domain's own first, then those nested in its other
 * entities (a registrar inside the registrant), breadth first.
 */
function* registrarEntities(entities: unknown[]): Generator<Record<string, unknown>> {
  let level = entities;
  let seen = 0;
  for (let depth = 0; depth < ENTITY_DEPTH && level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const entity of level) {
      if (++seen > MAX_ENTITIES) return;
      if (!isObject(entity)) continue;
      if (arrayOf(entity.roles).some((role) => typeof role === 'string' && role.toLowerCase() === 'registrar')) yield entity;
      // One by one: spreading 100,000s of them into push exceeds V8's argument limit (a RangeError).
      else for (const nested of arrayOf(entity.entities)) if (next.length < MAX_ENTITIES) next.push(nested);
    }
    level = next;
  }
}

function registrarName(entities: unknown[]): string | null {
  for (const entity of registrarEntities(entities)) {
    // An over-long name is no name (record.ts): the next of fn, org and handle is tried.
    const name = keptRegistrar(shownValue(vcardText(entity.vcardArray, 'fn'))) ?? keptRegistrar(shownValue(vcardText(entity.vcardArray, 'org')));
    if (name) return name;
    const handle = typeof entity.handle === 'string' ? keptRegistrar(shownValue(entity.handle)) : null;
    if (handle && /[a-z]/i.test(handle)) return handle;
    return null;
  }
  return null;
}

/** The text of a jCard property (`fn`, `org`): `["vcard", [[name, params, type, value], ...]]`. */
function vcardText(vcard: unknown, property: string): string | null {
  if (!Array.isArray(vcard) || vcard[0] !== 'vcard' || !Array.isArray(vcard[1])) return null;
  for (const item of vcard[1]) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || item[0].toLowerCase() !== property) continue;
    const value = item[3];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0]; // org may be structured
  }
  return null;
}

function registrarLink(links: unknown[]): string | null {
  const related = links.filter(
    (link): link is Record<string, unknown> =>
      isObject(link) &&
      typeof link.rel === 'string' &&
      link.rel.toLowerCase() === 'related' &&
      typeof link.type === 'string' &&
      link.type.toLowerCase().startsWith('application/rdap+json') &&
      typeof link.href === 'string' &&
      /^https?:\/\//i.test(link.href) &&
      URL.canParse(link.href),
  );
  const href = (related.find((link) => /\/domain\//i.test(link.href as string)) ?? related[0])?.href;
  return typeof href === 'string' ? href : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
