/**
 * The IDNA checks Node's `url.domainToASCII` leaves out (it follows the WHATWG URL parser, which
 * maps and converts but runs neither): the Bidi rule (RFC 5893, so `aא.com`, a Latin and a Hebrew
 * letter in one label, is no name) and the joiner rules (RFC 5892 CONTEXTJ: a zero-width joiner
 * only where a script spells with it). tr46, the reference UTS #46 implementation, runs both;
 * it is loaded on the first name that needs it, since most names are plain ASCII.
 */
import { createRequire } from 'node:module';

interface Tr46 {
  toASCII(
    domain: string,
    options: {
      checkBidi: boolean;
      checkJoiners: boolean;
      checkHyphens: boolean;
      useSTD3ASCIIRules: boolean;
      processingOption: 'nontransitional';
      verifyDNSLength: boolean;
    },
  ): string | null;
}

let tr46: Tr46 | undefined;

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
  tr46 ??= createRequire(import.meta.url)('tr46') as Tr46;
  return tr46.toASCII(name, BIDI_AND_JOINERS) !== null || tr46.toASCII(name, MAPPING_ONLY) === null;
}
