/** tr46 ships no types: the part lib/idna.ts calls. */
declare module 'tr46' {
  interface ToAsciiOptions {
    checkBidi?: boolean;
    checkJoiners?: boolean;
    checkHyphens?: boolean;
    useSTD3ASCIIRules?: boolean;
    processingOption?: 'nontransitional' | 'transitional';
    verifyDNSLength?: boolean;
  }
  export function toASCII(domain: string, options?: ToAsciiOptions): string | null;
}
