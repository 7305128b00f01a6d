/**
 * The IDNA checks Node's `url.domainToASCII` leaves out (it follows the WHATWG URL parser, which
 * maps and converts but runs neither): the Bidi rule (RFC 5893, so `aא.com`, a Latin and a Hebrew
 * letter in one label, is no name) and the joiner rules (RFC 5892 CONTEXTJ: a zero-width joiner
 * only where a script spells with it). tr46, the reference UTS #46 implementation, runs both.
 * Imported, not required when first needed: a bundler must see it (a lazy `require` left it out
 * of single-file bundles, and every non-ASCII domain then failed).
 */
import { toASCII } from 'tr46';

/** Only these two checks: what else tr46 refuses is left to the caller's own rules, as before. */
const MAPPING_ONLY = {
  checkBidi: false,
  checkJoiners: false,
  checkHyphens: false,
  useSTD3ASCIIRules: false,
  processingOption: 'nontransitional',
  verifyDNSLength: false,
} as const;
const BIDI_AND_JOINERS = { ...MAPPING_ONLY, checkBidi: true, checkJoiners: true } as const;

/**
 * False when `name` (as given, Unicode or punycode labels) breaks the Bidi rule or a joiner
 * rule; true otherwise, including for names that fail for some other reason (the caller's
 * own checks judge those).
 */
export function passesBidiAndJoinerRules(name: string): boolean {
  return toASCII(name, BIDI_AND_JOINERS) !== null || toASCII(name, MAPPING_ONLY) === null;
}
