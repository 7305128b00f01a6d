/**
 * Port-43 WHOIS text into a RegistrationRecord. There is no standard: registries write
 * `Key: value` lines (ICANN's gTLD layout, RIPE-style `key:   value`, `key.......: value`,
 * JPRS's `a. [Key]   value`), blocks under a heading (`Registrar:` then indented lines, as
 * .uk, .nl, .eu, .it, .li, .bg, .tw and .hk do), sections (`[Registrar]`), values continued on
 * indented lines (.pl, .kz), and contact objects after the domain's own.
 *
 * The reading, field by field (first match in the text wins, so a registry answer followed by
 * the registrar's keeps the registry's facts):
 * - registrar: the first registrar line with a shown value (`Registrar:`, `Sponsoring
 *   Registrar:`, `Registrar Name:`, `registrar-name:`, `Registration Service Provider:`, ...),
 *   or a `Registrar` block's Organization / Name line or first line; when the value is a handle
 *   that names a registrar object further down (.sk, .ua), that object's organization or name;
 *   a name over 256 characters is no name, and the next registrar line is read.
 * - created / updated / expires: the first line under one of the field's names whose value is
 *   wholly a date (dates.ts), skipping contact and registrar objects.
 * - status: every status line of the first paragraph that has one, EPP URLs and
 *   ` - explanations` dropped, comma lists split; a value over 128 characters is no status.
 * - nameservers: every nameserver line, continuation and block, first word only, lower case.
 * A leading IANA answer (`% IANA WHOIS server` ... `refer:`) and Verisign's `Server Name:`
 * records (other names that merely start with the query) are not the domain's data.
 */
import { parseRegistryDate } from './dates.js';
import { saysNotFound } from './answer-forms.js';
import {
  addUnique,
  detached,
  emptyRecord,
  hasFacts,
  hostnameOf,
  keptRegistrar,
  MAX_HOSTNAME_LENGTH,
  MAX_STATUS_LENGTH,
  shownValue,
  type RegistrationRecord,
} from './record.js';

/** What one WHOIS answer says. */
export interface ParsedWhois {
  record: RegistrationRecord;
  /** The registrar's WHOIS server named by a thin registry (`Registrar WHOIS Server:`), if any. */
  referral: string | null;
  /** The answer says the domain is not registered. */
  notFound: boolean;
}

interface Line {
  text: string;
  indent: number;
  /** Paragraph number: blank and comment lines separate paragraphs. */
  para: number;
  /** Blank, comment, or dropped (IANA preamble, Verisign `Server Name:` records). */
  skip: boolean;
  kv: { key: string; value: string } | null;
}

interface Entry {
  key: string;
  value: string;
  /** Values on the lines that continue this one (deeper indented, not `key: value`). */
  more: string[];
  /** For a heading (`Registrar:` with nothing after it): the lines of its block. */
  block: Line[];
  para: number;
  indent: number;
}

const aliases = (...names: string[]): ReadonlySet<string> => new Set(names);

const REGISTRAR_KEYS = aliases(
  'registrar',
  'sponsoring registrar',
  'registrar name',
  'registrar-name',
  'registration service provider',
  'current registrar',
  'current registar',
  'registrar of record',
  'registrar organization',
  'registrar organisation',
  'sponsoring registrar organization',
  'registered by',
  'authorized agency',
);
const CREATED_KEYS = aliases(
  'creation date',
  'created',
  'created on',
  'created date',
  'create date',
  'registered',
  'registered on',
  'registration date',
  'registration time',
  'record created',
  'record created on',
  'domain created',
  'domain created on',
  'domain record activated',
  'first registration date',
  'assigned',
  'domain name commencement date',
  'fecha de creación',
  'fecha de creacion',
  'registered date',
  'activated on',
  'domain registration date',
  'registration',
  'activated',
  'acivated',
  'date approved',
  'date registered',
  'domain registered',
  'domain create date',
  'domain creation date',
  'domain dateregistered',
  'fecha de registro',
  'entry created',
  'record created',
  'domain created date',
  'date de creation',
);
const UPDATED_KEYS = aliases(
  'updated date',
  'updated',
  'last updated',
  'last updated on',
  'last update',
  'last-update',
  'last modified',
  'last-modified',
  'modified',
  'changed',
  'modification date',
  'ultima actualización',
  'ultima actualizacion',
  'última actualización',
  'record last updated on',
  'last updated date',
  'update date',
  'domain last updated date',
  'record last updated',
  'domain record last updated',
  'record changed on',
  'last-updated',
  'modified date',
  'updated on',
  'domain datelastmodified',
  'record last modified',
  'domain last updated',
  'entry updated',
);
const EXPIRES_KEYS = aliases(
  'registry expiry date',
  'registrar registration expiration date',
  'expiration date',
  'expiry date',
  'expires',
  'expires on',
  'expire',
  'expire date',
  'expiration time',
  'paid-till',
  'valid until',
  'renewal date',
  'validity',
  'record expires on',
  'fecha de vencimiento',
  'expires at',
  'expiry',
  'domain expiration date',
  'registry expiration date',
  'domain expires on',
  'domain expires',
  'date renewal',
  'renewal',
  'record will expire on',
  'expired',
  'valid-date',
  'domain datebilleduntil',
  'exp date',
  'domain currently expires',
  'record expired',
);
/** Status keys that name the domain's status outright: when any is present, the plain ones (`status`, `state`) are not read. */
const DOMAIN_STATUS_KEYS = aliases('domain status');
const STATUS_KEYS = aliases(
  'domain status',
  'status',
  'state',
  'eppstatus',
  'epp status',
  'registration status',
  'estatus del dominio',
  'estatus',
  'domaintype',
  'domain state',
);
const NAMESERVER_KEYS = aliases(
  'name server',
  'name servers',
  'nameserver',
  'nameservers',
  'nserver',
  'dns',
  'primary server',
  'secondary server',
  'domain servers',
  'domain nameservers',
  'domain servers in listed order',
  'name servers in the listed order',
  'name server information',
  'name servers information',
  'servidor(es) de nombres de dominio',
  'host name',
  'hostname',
  'nameservers in listed order',
  'dns servers',
  'servidores de nombre',
  'domain name servers listed in order',
  'servers',
  'current nameservers',
  'primary server hostname',
  'secondary server hostname',
  'third server hostname',
  'fourth server hostname',
  'primary name server',
  'secondary name server',
  'dns name',
  'primary ns',
  'secondary ns',
);
/** Numbered nameserver keys: `Name Server 1`, `NS 1`, `Domain server 2`, `ns1_hostname`, `ns_name_01`. */
const NUMBERED_NAMESERVER = /^(?:name ?server|ns|domain server|dns|nserver|ns name) ?\d+(?: hostname)?$|^ns\d+ hostname$/;
const isNameserverKey = (key: string): boolean => NAMESERVER_KEYS.has(key) || NUMBERED_NAMESERVER.test(key);
const REFERRAL_KEYS = aliases('registrar whois server', 'whois server', 'referral whois server');
/** First keys of the objects that follow the domain's own (contacts, registrar objects): not the domain's dates. */
const OBJECT_KEYS = aliases('nic-hdl', 'nic-hdl-br', 'person', 'personname', 'contact', 'role', 'tech-c', 'zone-c', 'admin-c', 'holder-c');
/** Inside a registrar block or object, where its name is. */
const NAME_KEYS = ['organization', 'organisation', 'org', 'name', 'company name'] as const;

/** `Record expires on 2019-11-09 (YYYY-MM-DD)`: the few date lines written without a colon. */
const NO_COLON = /^(record expires on|record created on|record last updated on|record changed on|domain created on|domain expires on)\s+(.+)$/i;
/** `a. [Domain Name]   VALUE` (JPRS) and `[Registrar]` (a section heading, empty value). */
const BRACKETED = /^(?:[a-z](?:\.\s*|\s+))?\[([^\]]{1,60})\]\s*(.*)$/i;
/** `Valid-date          2011-07-23` (SK-NIC): a one-word key, three or more blanks, the value. */
/** `Nom de domaine#. . . . . . .google.dz` (whois.nic.dz). */
const HASH_DOTS = /^([^#:]{2,60})#[.\s]+(\S.*)$/;
const WIDE_GAP = /^([a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)\s{3,}(\S.*)$/i;

/** Parse one WHOIS answer. `domain` (the name asked for) is not needed to read it. */
export function parseWhoisText(text: string): ParsedWhois {
  const lines = readLines(text);
  const entries = readEntries(lines);
  const record = emptyRecord();
  const firstOfPara = new Map<number, Entry>();
  for (const entry of entries) if (!firstOfPara.has(entry.para)) firstOfPara.set(entry.para, entry);
  const objectParas = new Set<number>();
  for (const [para, first] of firstOfPara) {
    if (OBJECT_KEYS.has(first.key)) objectParas.add(para);
    // A paragraph that starts with the registrar is the registrar's object (.sk, .ua) unless it
    // holds the domain's name or expiry (a registrar object never expires; NIC.SL's domain paragraph does).
    else if (first.key === 'registrar' && !entries.some((e) => e.para === para && (e.key === 'domain name' || e.key === 'domain' || EXPIRES_KEYS.has(e.key))))
      objectParas.add(para);
  }

  record.registrar = findRegistrar(entries, firstOfPara);
  record.createdAt = findDate(entries, CREATED_KEYS, objectParas);
  record.updatedAt = findDate(entries, UPDATED_KEYS, objectParas);
  record.expiresAt = findDate(entries, EXPIRES_KEYS, objectParas);
  record.status = findStatus(entries, objectParas);
  record.nameservers = findNameservers(entries);

  let referral: string | null = null;
  for (const entry of entries) {
    if (!REFERRAL_KEYS.has(entry.key)) continue;
    const host = hostnameOf(entry.value.replace(/^(?:whois|rwhois):\/\//i, '').split('/')[0]);
    if (host) {
      referral = host;
      break;
    }
  }
  // Only an answer without registration facts can say "not registered" (answer-forms.ts).
  const notFound = !hasFacts(record) && saysNotFound(text);
  return { record, referral, notFound };
}

// --- lines and entries ----------------------------------------------------------------------

/**
 * Lines of an answer that are read: real answers have a few hundred; the rest of a longer one
 * (a server that sends megabytes of lines) is ignored, so that parsing stays fast.
 */
export const MAX_ANSWER_LINES = 4_000;
/**
 * Characters of a line read: past them no registry sends data (the longest lines are disclaimers,
 * about 1.4 KB). With the answer's byte cap it bounds what every pattern below reads.
 */
export const MAX_LINE_LENGTH = 2_048;
/** Lines a heading's block or a value's continuation may span (real ones: a dozen at most). */
const MAX_BLOCK_LINES = 100;

function readLines(text: string): Line[] {
  const raw = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/\0/g, '')
    .split('\n', MAX_ANSWER_LINES);
  // An IANA answer in front of the registry's (as `whois` clients print a referral chain).
  let start = 0;
  const firstText = raw.findIndex((line) => line.trim() !== '');
  if (firstText >= 0 && /^%\s*IANA WHOIS server/i.test(raw[firstText])) {
    const next = raw.findIndex((line, i) => i > firstText && /^#\s*\S/.test(line));
    // A whole IANA answer (whois.iana.org is the registry of .int and .arpa) is the data.
    start = Math.max(next, 0);
  }
  const lines: Line[] = [];
  let para = 0;
  let wasSeparator = true;
  for (let i = 0; i < raw.length; i++) {
    const textLine = raw[i].slice(0, MAX_LINE_LENGTH).trimEnd();
    const trimmed = textLine.trimStart();
    const separator = i < start || trimmed === '' || SEPARATOR.test(trimmed);
    if (separator && !wasSeparator) para++;
    wasSeparator = separator;
    lines.push({ text: trimmed, indent: indentOf(textLine), para, skip: separator, kv: separator ? null : keyValue(trimmed) });
  }
  // Verisign's old answers list every name that starts with the query (`Server Name:`
  // records, with a registrar each) before the domain itself: drop those records.
  const spam = new Set(lines.filter((line) => line.kv?.key === 'server name').map((line) => line.para));
  if (spam.size > 0) for (const line of lines) if (spam.has(line.para)) line.skip = true;
  return lines;
}

/** Comment and rule lines: `%`, `#`, `>>>`, `[ JPRS notice ]`, `-----`. */
const SEPARATOR = /^(?:%|#|>>>|\[\s|-{3,})/;

/** Leading whitespace width, a tab counting 8. */
function indentOf(line: string): number {
  let width = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) width++;
    else if (c === 9) width += 8;
    else break;
  }
  return width;
}

function keyValue(text: string): { key: string; value: string } | null {
  const first = text.charCodeAt(0);
  if (first === 91 /* [ */ || ((text.charCodeAt(1) === 46 /* . */ || text.charCodeAt(1) === 32) /* space */ && text.includes('['))) {
    const bracket = BRACKETED.exec(text);
    if (bracket) return { key: cleanKey(bracket[1]), value: bracket[2].trim() };
  }
  const phrase = first === 82 || first === 114 || first === 68 || first === 100 ? NO_COLON.exec(text) : null; // R, r, D, d
  if (phrase) return { key: cleanKey(phrase[1]), value: phrase[2].trim() };
  // `Key: value`: the key is what precedes the first colon (no `[` or `]` in it, at most 80
  // characters), and a colon that starts `//` is a URL's, not a separator.
  const colon = text.indexOf(':');
  if (colon < 0) {
    const wide = WIDE_GAP.exec(text) ?? HASH_DOTS.exec(text);
    return wide ? { key: cleanKey(wide[1]), value: wide[2].trim() } : null;
  }
  if (colon < 1 || text.startsWith('//', colon + 1)) return null;
  const rawKey = text.slice(0, colon).trimEnd();
  if (rawKey.length === 0 || rawKey.length > 80 || rawKey.includes('[') || rawKey.includes(']')) return null;
  const key = cleanKey(rawKey);
  if (key === '' || key.length > 60 || !/[a-z]/.test(key)) return null;
  return { key, value: text.slice(colon + 1).trim() };
}

/** Keys seen before, cleaned: registries repeat the same few dozen keys. Bounded. */
const CLEAN_KEYS = new Map<string, string>();

/** `** Domain Servers` -> `domain servers`; `domain.............` -> `domain`. */
function cleanKey(key: string): string {
  let clean = CLEAN_KEYS.get(key);
  if (clean === undefined) {
    clean = key
      .replace(/\s*\([^)]*[\s/][^)]*\)/g, '') // `Creation Date (dd/mm/yyyy)`, `Servidores de nombre (Domain servers)`, not `Servidor(es)`
      .replace(/^\d{1,2}[a-z]?\.\s+/, '') // `5a.        Primary NS` (whois.gov.za)
      .replace(/^.* \/ /, '') // `Data de registo / Creation Date`: the English name
      .replace(/_/g, ' ')
      .replace(/^[\s*\-.]+/, '')
      .replace(/[\s.]+$/, '')
      .replace(/\s+/g, ' ')
      .toLowerCase();
    if (CLEAN_KEYS.size >= 4_096) CLEAN_KEYS.clear();
    // Detached: a key cut from an answer would hold the whole answer in memory for as long as it is remembered.
    CLEAN_KEYS.set(detached(key), detached(clean));
  }
  return clean;
}

function readEntries(lines: Line[]): Entry[] {
  const entries: Entry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.skip) continue;
    if (line.kv) {
      const entry: Entry = { key: line.kv.key, value: line.kv.value, more: [], block: [], para: line.para, indent: line.indent };
      if (entry.value === '') {
        entry.block = blockAfter(lines, i, isNameserverKey(entry.key));
      } else {
        // Values continued on deeper-indented lines (.pl nameservers, .kz status).
        const end = Math.min(lines.length, i + 1 + MAX_BLOCK_LINES);
        for (let j = i + 1; j < end && !lines[j].skip && lines[j].indent > line.indent && !lines[j].kv; j++) entry.more.push(lines[j].text);
      }
      entries.push(entry);
    } else {
      // A heading without a colon (`Registrar`, `Nameservers` in .it) introduces indented lines.
      const next = lines[i + 1];
      if (next && !next.skip && next.indent > line.indent && line.text.length <= 60) {
        entries.push({ key: cleanKey(line.text), value: '', more: [], block: blockAfter(lines, i, false), para: line.para, indent: line.indent });
      }
    }
  }
  return entries;
}

/**
 * The lines of the block a heading at `index` introduces: deeper-indented lines, or lines at
 * its own indent that are not `key: value` (the .li and .bg layout), up to a blank line. A
 * nameserver heading may be followed by a blank line first (.kg, .hk).
 */
function blockAfter(lines: Line[], index: number, blankFirst: boolean): Line[] {
  const heading = lines[index];
  let j = index + 1;
  if (blankFirst) while (j < lines.length && lines[j].skip && lines[j].text === '') j++;
  const block: Line[] = [];
  for (const end = Math.min(lines.length, j + MAX_BLOCK_LINES); j < end; j++) {
    const line = lines[j];
    if (line.skip) break;
    if (line.indent > heading.indent || (!line.kv && !line.text.endsWith(':'))) block.push(line);
    else break;
  }
  return block;
}

// --- fields ---------------------------------------------------------------------------------

function findRegistrar(entries: Entry[], firstOfPara: ReadonlyMap<number, Entry>): string | null {
  for (const [index, entry] of entries.entries()) {
    if (!REGISTRAR_KEYS.has(entry.key)) continue;
    // An over-long name is no name (record.ts): the next registrar line is read.
    if (entry.value === '') {
      const named = nameInBlock(entry.block) ?? nameInSection(entries, index);
      const kept = named ? keptRegistrar(registrarName(named)) : null;
      if (kept) return kept;
      continue;
    }
    const value = shownValue(entry.value);
    if (value === null) continue;
    const kept = keptRegistrar(registrarName(registrarObjectName(entries, firstOfPara, entry, value) ?? value));
    if (kept) return kept;
  }
  return null;
}

/**
 * A registrar's name without the registry's identifiers for it: `MarkMonitor Inc. (R22-LRCC)`,
 * `MarkMonitor Inc. (292)`, `MarkMonitor Inc R45-ME`, `NetNames Limited [Tag = NETNAMES]`, a
 * link to the registrar's page in brackets (`Gabia, Inc.(http://www.gabia.co.kr)`), and
 * Nominet's trading name after `t/a`.
 */
function registrarName(value: string): string {
  // White space runs made one first: `\s*` before a pattern that then fails is quadratic in a
  // run's length, and a registry's answer is anyone's text.
  const name = withoutTag(value.replace(/\s+/g, ' '))
    .replace(/\s*\((?:R\d+-[A-Z0-9]+|\d+)\)$/, '')
    // The registrar's page in brackets: `MarkMonitor Inc. ( https://nic.at/registrar/434 )`, `Gabia, Inc.(http://www.gabia.co.kr)`.
    .replace(/\s?\( ?https?:\/\/[^\s()]* ?\)$/i, '')
    .replace(/\s+R\d+-[A-Z0-9]+$/, '')
    .replace(/\s+t\/a\s+.*$/i, '')
    .trim();
  return name === '' ? value : name;
}

/**
 * `NetNames Limited [Tag = NETNAMES]` without its tag. Found from the last `[tag = `, not by a
 * pattern anchored at the end, which backtracks over every earlier `[tag = ` (quadratic).
 */
function withoutTag(value: string): string {
  const at = value.toLowerCase().lastIndexOf('[tag = ');
  if (at === -1 || !value.endsWith(']') || value.indexOf(']', at) !== value.length - 1) return value;
  return value.slice(0, at).trimEnd();
}

/** `Registrar:` alone on its line with `name:` lines after it at the same indent (.ee): the section's name. */
function nameInSection(entries: Entry[], index: number): string | null {
  const heading = entries[index];
  const section: Entry[] = [];
  for (let i = index + 1; i < entries.length && entries[i].para === heading.para && entries[i].value !== ''; i++) section.push(entries[i]);
  for (const key of NAME_KEYS) {
    const value = shownValue(section.find((entry) => entry.key === key)?.value);
    if (value) return value;
  }
  return null;
}

/** A registrar block's name: its Organization or Name line, else its first plain line. */
function nameInBlock(block: readonly Line[]): string | null {
  for (const key of NAME_KEYS) {
    const line = block.find((candidate) => candidate.kv?.key === key);
    const value = shownValue(line?.kv?.value);
    if (value) return value;
  }
  const plain = block.find((line) => !line.kv);
  return shownValue(plain?.text);
}

/**
 * When the registrar value is a handle (`FAJN-0002`, `ua.markmonitor`) and a registrar object
 * with that handle follows (a paragraph starting `registrar: <handle>`), the object's
 * organization or name.
 */
function registrarObjectName(entries: Entry[], firstOfPara: ReadonlyMap<number, Entry>, found: Entry, handle: string): string | null {
  for (const [para, first] of firstOfPara) {
    if (first.key !== found.key || first.value !== handle) continue;
    if (para < found.para) continue;
    const inObject = entries.filter((entry) => entry.para === para);
    for (const key of NAME_KEYS) {
      const value = shownValue(inObject.find((entry) => entry.key === key)?.value);
      if (value) return value;
    }
  }
  return null;
}

function findDate(entries: Entry[], keys: ReadonlySet<string>, objectParas: ReadonlySet<number>): number | null {
  if (keys === UPDATED_KEYS) {
    // RIPE-style objects list every change (`changed:` lines in a row) oldest first: the latest
    // of the domain's first run of them is the update.
    const first = entries.findIndex((entry) => entry.key === 'changed' && !objectParas.has(entry.para));
    let latest: number | null = null;
    for (let i = first; i >= 0 && i < entries.length && entries[i].key === 'changed'; i++) {
      const instant = parseRegistryDate(entries[i].value) ?? stampAfterHandle(entries[i].value);
      if (instant !== null && (latest === null || instant > latest)) latest = instant;
    }
    if (latest !== null) return latest;
  }
  for (const entry of entries) {
    if (objectParas.has(entry.para)) continue;
    let text: string | undefined;
    if (keys.has(entry.key)) text = entry.value !== '' ? entry.value : entry.block.find((line) => !line.kv)?.text;
    // UANIC and Hostmaster.ua: the expiry is in the status, `status: OK-UNTIL 20140903121852`.
    else if (keys === EXPIRES_KEYS && entry.key === 'status') text = /^ok-until\s+(\d{8,14})$/i.exec(entry.value)?.[1];
    // JPRS: `[State] Connected (2026/03/31)`, connected (registered) until then.
    else if (keys === EXPIRES_KEYS && entry.key === 'state') text = /^connected\s+\(([^)]+)\)$/i.exec(entry.value)?.[1];
    if (!text) continue;
    const instant = parseRegistryDate(text) ?? stampAfterHandle(text);
    if (instant !== null) return instant;
  }
  return null;
}

/** RIPE-style `changed: notify@drs.ua 20121216134104` and `created: 0-UANIC 20020903000000`: the stamp after a handle or address. */
function stampAfterHandle(text: string): number | null {
  const stamp = /^\S+(?:\s+AT\s+\S+)?\s+(\d{8}(?:\d{6})?)(?:\s+\([^)]*\))?$/i.exec(text.trim());
  return stamp ? parseRegistryDate(stamp[1]) : null;
}

function findStatus(entries: Entry[], objectParas: ReadonlySet<number>): string[] {
  const status: string[] = [];
  let para: number | null = null;
  const keys = entries.some((entry) => DOMAIN_STATUS_KEYS.has(entry.key) && entry.value !== '' && !objectParas.has(entry.para))
    ? DOMAIN_STATUS_KEYS
    : STATUS_KEYS;
  for (const entry of entries) {
    if (!keys.has(entry.key) || objectParas.has(entry.para)) continue;
    // `state:` is .ru's domain state at the start of a line; indented, it is a contact's address.
    if (entry.key === 'state' && entry.indent > 0) continue;
    const values = entry.value !== '' ? [entry.value, ...entry.more] : entry.block.map((line) => line.text);
    const cleaned = values.flatMap(statusValues);
    if (cleaned.length === 0) continue;
    if (para === null) para = entry.para;
    else if (entry.para !== para) break;
    for (const value of cleaned) addUnique(status, value, MAX_STATUS_LENGTH);
  }
  return status;
}

/** `clientHold https://icann.org/epp#clientHold` -> `clientHold`; `a,b` -> both; `ok - explanation` -> `ok`. */
function statusValues(text: string): string[] {
  // White space runs made one first, as in registrarName: each pattern below starts with `\s`.
  const bare = text
    .replace(/\s+/g, ' ')
    .replace(/\s*\(?https?:\/\/\S*\)?/gi, '')
    .replace(/\s+-(?:\s+.*)?$/, '');
  return bare
    .split(/\s*,\s*/)
    .map((value) => shownValue(value))
    .filter((value): value is string => value !== null && value.length <= MAX_STATUS_LENGTH);
}

function findNameservers(entries: Entry[]): string[] {
  const names: string[] = [];
  const add = (text: string) => {
    for (const host of hostsInLine(text)) addUnique(names, host, MAX_HOSTNAME_LENGTH);
  };
  for (const entry of entries) {
    if (!isNameserverKey(entry.key)) continue;
    if (entry.value !== '') {
      // MYNIC: `[Primary Name Server]  NS1GOOG0.SER` (a handle), the host on the next line.
      const handleFirst = entry.more.length > 0 && hostsInLine(entry.more[0]).length > 0 && /\.ser$/i.test(entry.value.split(/\s/)[0]);
      if (!handleFirst) add(entry.value);
      entry.more.forEach(add);
    } else {
      for (const line of entry.block) add(line.kv && isNameserverKey(line.kv.key) ? line.kv.value : line.text);
    }
  }
  // A registry that lists the domain itself where others list nameservers (DK Hostmaster's
  // `DNS: google.dk`, the owner of .pt's zone-file lines) does not name a nameserver by it.
  const own = domainNameOf(entries);
  return own === null ? names : names.filter((name) => name !== own);
}

/**
 * The nameservers one line names: its first word (`ns1.example.com 192.0.2.1`), the target of
 * a zone-file line (`google.pt NS ns4.google.com.`), or every word of a line that lists several
 * hosts apart (SGNIC: `NS1.GOOGLE.COM          NS2.GOOGLE.COM`).
 */
function hostsInLine(text: string): string[] {
  const words = text
    .replace(/^[-*]\s*/, '')
    .trim()
    .split(/[\s,|[(]+/);
  const ns = words.findIndex((word) => word.toUpperCase() === 'NS');
  if (ns > 0 && ns + 1 < words.length) {
    const target = hostnameOf(words[ns + 1]);
    return target ? [target] : [];
  }
  const first = hostnameOf(words[0] ?? '');
  if (!first) return [];
  if (/\S\s{2,}\S/.test(text.trim())) {
    const all = words.map(hostnameOf);
    if (all.every((host) => host !== null)) return all as string[];
  }
  return [first];
}

const DOMAIN_NAME_KEYS = aliases('domain name', 'domain', 'domain-name', 'domainname', 'complete domain name');

/** The answer's own `Domain Name:`, lower case. */
function domainNameOf(entries: Entry[]): string | null {
  for (const entry of entries) if (DOMAIN_NAME_KEYS.has(entry.key) && entry.value !== '') return hostnameOf(entry.value.split(/\s/)[0]);
  return null;
}
