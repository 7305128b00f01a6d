/**
 * SPF record syntax, to RFC 7208's ABNF (sections 4.5, 4.6, 5, 6 and 7.1) without evaluating
 * anything: no DNS, no macro expansion. A record that fails the grammar makes check_host()
 * return permerror before any mechanism is tried (RFC 7208 4.6), so it is reported as invalid
 * whatever the sending address.
 *
 * Choices where the RFC leaves room, all the ones the openspf test suite (rfc7208-tests.yml)
 * checks: terms are separated by one or more SP (a TAB is not a separator, so it breaks the term
 * it is in); mechanism and modifier names are case-insensitive (ABNF strings are); `redirect`
 * and `exp` may each appear once (6); the macro letters c, r and t are refused outside `exp`
 * text (7.2), which is not read here; a domain-spec must end in a macro or a valid top label
 * (a dot then a label that is not all digits), checked before any expansion.
 */
import { isIPv6 } from 'node:net';

/** Why `record` does not follow RFC 7208's grammar, or null when it does. `record` starts with `v=spf1`. */
export function spfSyntaxError(record: string): string | null {
  // 3.1 and the ABNF: a record is printable US-ASCII and SP (the macro-literal and SP ranges).
  const bad = /[^\x20-\x7e]/.exec(record);
  if (bad) {
    const code = bad[0].codePointAt(0) ?? 0;
    return code > 0x7e ? 'non-ASCII character in the record' : `control character U+${code.toString(16).toUpperCase().padStart(4, '0')} in the record`;
  }
  const terms = record
    .split(' ')
    .slice(1)
    .filter((term) => term !== '');
  const seen = new Set<string>();
  for (const term of terms) {
    const error = termError(term, seen);
    if (error) return `${error} in "${term}"`;
  }
  return null;
}

const MECHANISMS = new Set(['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists']);
/** `name "="` of a modifier (6): a name starts with a letter; anything else before `=` is no modifier. */
const MODIFIER = /^([a-z][a-z0-9_.-]*)=(.*)$/is;
/** `[qualifier] name [":" or "/" rest]` of a directive. */
const DIRECTIVE = /^([+\-?~]?)([a-z0-9]+)(.*)$/is;

function termError(term: string, seen: Set<string>): string | null {
  const modifier = MODIFIER.exec(term);
  if (modifier) return modifierError(modifier[1].toLowerCase(), modifier[2], seen);
  const directive = DIRECTIVE.exec(term);
  if (!directive) return 'not a mechanism or modifier';
  const name = directive[2].toLowerCase();
  if (!MECHANISMS.has(name)) return `unknown mechanism "${directive[2]}"`;
  return mechanismError(name, directive[3]);
}

function modifierError(name: string, value: string, seen: Set<string>): string | null {
  if (name === 'redirect' || name === 'exp') {
    if (seen.has(name)) return `${name}= appears more than once`;
    seen.add(name);
    return domainSpecError(value, name === 'exp' ? 'exp= domain-spec' : 'redirect= domain-spec');
  }
  // unknown-modifier = name "=" macro-string: ignored, but its macros must parse (6).
  return macroStringError(value);
}

/** What follows a mechanism's name: `:domain-spec`, cidr lengths, or an address. */
function mechanismError(name: string, rest: string): string | null {
  switch (name) {
    case 'all':
      return rest === '' ? null : 'all takes no argument';
    case 'include':
    case 'exists':
      if (!rest.startsWith(':')) return `${name} needs ":" and a domain-spec`;
      return domainSpecError(rest.slice(1), `${name} domain-spec`);
    case 'ptr':
      if (rest === '') return null;
      if (!rest.startsWith(':')) return 'ptr takes only ":" and a domain-spec';
      return domainSpecError(rest.slice(1), 'ptr domain-spec');
    case 'a':
    case 'mx': {
      const cidr = DUAL_CIDR.exec(rest);
      const target = cidr ? rest.slice(0, cidr.index) : rest;
      if (cidr) {
        const error = cidrError(cidr[1], 32) ?? cidrError(cidr[2], 128);
        if (error) return error;
      }
      if (target === '') return null;
      if (!target.startsWith(':')) return `${name} takes ":" and a domain-spec, then cidr lengths`;
      return domainSpecError(target.slice(1), `${name} domain-spec`);
    }
    case 'ip4':
    case 'ip6':
      return networkError(name, rest);
    default:
      return `unknown mechanism "${name}"`;
  }
}

/** `[ "/" ip4-cidr ] [ "//" ip6-cidr ]` at the end of an a or mx mechanism (leading zeros refused by the ABNF). */
const DUAL_CIDR = /(?:\/(0|[1-9][0-9]{0,1}))?(?:\/\/(0|[1-9][0-9]{0,2}))?$/;

function cidrError(length: string | undefined, max: number): string | null {
  if (length === undefined) return null;
  return Number(length) <= max ? null : `cidr length /${length} over ${max}`;
}

const QNUM = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])';
const IP4_NETWORK = new RegExp(`^${QNUM}(?:\\.${QNUM}){3}$`);

function networkError(name: 'ip4' | 'ip6', rest: string): string | null {
  if (!rest.startsWith(':')) return `${name} needs ":" and an address`;
  const slash = rest.indexOf('/');
  const address = slash < 0 ? rest.slice(1) : rest.slice(1, slash);
  const length = slash < 0 ? undefined : rest.slice(slash + 1);
  if (name === 'ip4' ? !IP4_NETWORK.test(address) : !isIp6Network(address)) return `${name} address "${address}" is not valid`;
  if (length === undefined) return null;
  if (!/^(?:0|[1-9][0-9]*)$/.test(length)) return `${name} cidr length "/${length}" is not a number`;
  return cidrError(length, name === 'ip4' ? 32 : 128);
}

/** An IPv6 address in RFC 4291 2.2 text form, an embedded IPv4 tail allowed; no zone id (`%` is no address character). */
function isIp6Network(text: string): boolean {
  return isIPv6(text) && !text.includes('%');
}

/**
 * `domain-spec = macro-string domain-end` where `domain-end = ("." toplabel ["."]) / macro-expand`.
 * The syntax is checked as written: a name that only a macro expansion makes valid or invalid is
 * left to evaluation (RFC 7208 suite: invalid-hello-macro).
 */
function domainSpecError(spec: string, what: string): string | null {
  if (spec === '') return `empty ${what}`;
  const macros = readMacroString(spec);
  if (typeof macros === 'string') return macros;
  if (macros.literalTail === '') return null; // ends in a macro-expand
  const name = macros.literalTail.endsWith('.') ? macros.literalTail.slice(0, -1) : macros.literalTail;
  const dot = name.lastIndexOf('.');
  if (dot < 0) return `${what} "${spec}" does not end in a top label or a macro`;
  const toplabel = name.slice(dot + 1);
  if (!isTopLabel(toplabel)) return `${what} "${spec}" ends in "${toplabel}", not a valid top label`;
  return null;
}

/** `toplabel = (*alphanum ALPHA *alphanum) / (1*alphanum "-" *(alphanum / "-") alphanum)`. */
function isTopLabel(label: string): boolean {
  return /^[a-z0-9]*[a-z][a-z0-9]*$/i.test(label) || /^[a-z0-9]+-[a-z0-9-]*[a-z0-9]$/i.test(label);
}

/** Macro letters allowed outside `exp` text (7.2: c, r and t only in an explanation string, never read here). */
const DOMAIN_MACRO_LETTERS = 'slodiphv';

/**
 * `macro-string = *( macro-expand / macro-literal )` with `macro-expand = "%{" letter
 * *DIGIT ["r"] *delimiter "}" / "%%" / "%_" / "%-"` (7.1). Returns the reason it fails, or the
 * literal text after its last macro-expand (empty when it ends in one).
 */
function readMacroString(text: string): string | { literalTail: string } {
  let tailStart = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '%') continue;
    const next = text[i + 1];
    if (next === '%' || next === '_' || next === '-') {
      i++;
      tailStart = i + 1;
      continue;
    }
    if (next !== '{') return `"%" not followed by "{", "%", "_" or "-"`;
    const close = text.indexOf('}', i + 2);
    const body = close < 0 ? null : /^([a-z])([0-9]*)(r?)([.\-+,/_=]*)$/i.exec(text.slice(i + 2, close));
    if (!body) return `malformed macro "${text.slice(i, close < 0 ? undefined : close + 1)}"`;
    const letter = body[1].toLowerCase();
    if (!DOMAIN_MACRO_LETTERS.includes(letter)) return `macro letter "${body[1]}" not allowed here`;
    i = close;
    tailStart = close + 1;
  }
  return { literalTail: text.slice(tailStart) };
}

function macroStringError(text: string): string | null {
  const read = readMacroString(text);
  return typeof read === 'string' ? read : null;
}
