/**
 * Cryptocurrency addresses: which chain a text is an address of, and whether its checksum holds.
 * Bitcoin through bitcoin-address-validation (legacy, P2SH, SegWit, Taproot/bech32m), EVM
 * through EIP-55 (keccak-256), base58check chains (Tron, Litecoin, Dash, ZCash, Dogecoin) by
 * their double SHA-256 checksum, XRP by the same checksum over Ripple's base58 alphabet,
 * Litecoin bech32/bech32m and Bitcoin Cash cashaddr by their BCH-code checksums, Polkadot-family
 * SS58 by its blake2b checksum, and Monero by format only.
 */
import { getAddressInfo } from 'bitcoin-address-validation';
import { blake2b } from '@noble/hashes/blake2.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

export type Chain = 'btc' | 'evm' | 'trx' | 'ltc' | 'doge' | 'dash' | 'zec' | 'bch' | 'btg' | 'xmr' | 'xrp' | 'dot';

export interface CryptoAddress {
  /**
   * The address as compared: EVM lower-cased with 0x, bech32 lower-cased, cashaddr lower-cased
   * with its `bitcoincash:` prefix, SS58 as its generic Substrate (prefix 42) address, others as given.
   */
  normalized: string;
  chain: Chain;
  /** False when the format is the chain's but the checksum does not hold (the identifier is then refused). */
  checksumValid: boolean;
  /** `p2tr`, `p2wpkh`, ... for Bitcoin. */
  kind?: string;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_MAP = new Map([...B58].map((c, i) => [c, i]));
/** XRP's base58 alphabet: the same scheme, letters in another order (`r` is zero). */
const XRP_B58_MAP = new Map([...'rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz'].map((c, i) => [c, i]));

/** Base58 decode (Bitcoin alphabet unless told); null on a character outside it. */
export function base58Decode(text: string, alphabet: ReadonlyMap<string, number> = B58_MAP): Uint8Array | null {
  const zero = [...alphabet].find(([, digit]) => digit === 0)![0];
  let value = 0n;
  for (const c of text) {
    const digit = alphabet.get(c);
    if (digit === undefined) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  for (const c of text) {
    if (c !== zero) break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

/** Base58 encode (Bitcoin alphabet): leading zero bytes as `1`s. */
function base58Encode(bytes: Uint8Array): string {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let out = '';
  while (value > 0n) {
    out = B58[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

function base58CheckOk(text: string, alphabet: ReadonlyMap<string, number> = B58_MAP): boolean {
  const bytes = base58Decode(text, alphabet);
  return bytes !== null && checksumHolds(bytes);
}

/** Whether decoded base58check bytes end in the first 4 bytes of their body's double SHA-256. */
function checksumHolds(bytes: Uint8Array): boolean {
  if (bytes.length < 5) return false;
  const body = bytes.subarray(0, -4);
  const sum = sha256(sha256(body));
  return bytes.subarray(-4).every((b, i) => b === sum[i]);
}

/** EIP-55 checksummed form of a 40-hex-digit address (without 0x). */
export function eip55(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1] >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += nibble >= 8 ? lower[i].toUpperCase() : lower[i];
  }
  return out;
}

/**
 * Whether `text` has a shape bitcoin-address-validation may accept: bech32 text (one case
 * throughout) of the `bc`, `tb` or `bcrt` prefix, or 25 base58check bytes whose version byte is
 * 0x00, 0x05, 0x6f or 0xc4, which encode as 26 to 35 base58 characters starting 1, 3, m or n,
 * or 2. A superset of what it accepts (test/products/scamrisk-speed.test.ts checks it).
 */
export function mayBeBitcoin(text: string): boolean {
  return BTC_BECH32_LOWER.test(text) || BTC_BECH32_UPPER.test(text) || BTC_BASE58_SHAPE.test(text);
}

const BTC_BECH32_LOWER = /^(?:bc|tb|bcrt)1[02-9ac-hj-np-z]+$/;
const BTC_BECH32_UPPER = /^(?:BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$/;
const BTC_BASE58_SHAPE = /^[123mn][1-9A-HJ-NP-Za-km-z]{25,34}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Mixed-case EVM addresses already checked (keccak-256 costs several µs): the same ones come back. */
const EIP55_MEMO_SIZE = 4096;
const eip55Memo = new Map<string, boolean>();

/** Whether a mixed-case 40-hex-digit address (without 0x) is its own EIP-55 form. Memoised, bounded. */
function eip55Holds(hex: string): boolean {
  let holds = eip55Memo.get(hex);
  if (holds === undefined) {
    holds = eip55(hex) === '0x' + hex;
    if (eip55Memo.size >= EIP55_MEMO_SIZE) eip55Memo.clear(); // bounded: callers choose the addresses
    eip55Memo.set(hex, holds);
  }
  return holds;
}

/** SS58: the 32-byte public key (hex) and whether the blake2b checksum holds; null when not SS58-shaped. */
export function ss58PublicKey(text: string): { key: string; checksumValid: boolean } | null {
  if (text.length < 46 || text.length > 50) return null;
  const bytes = base58Decode(text);
  if (!bytes || (bytes.length !== 35 && bytes.length !== 36)) return null;
  const prefixLength = bytes[0] & 0x40 ? 2 : 1;
  if (bytes.length !== prefixLength + 34) return null;
  const body = bytes.subarray(0, -2);
  const hash = blake2b(Uint8Array.from([...new TextEncoder().encode('SS58PRE'), ...body]), { dkLen: 64 });
  const key = Buffer.from(bytes.subarray(prefixLength, prefixLength + 32)).toString('hex');
  return { key, checksumValid: hash[0] === bytes[bytes.length - 2] && hash[1] === bytes[bytes.length - 1] };
}

/** The SS58 address format's network prefix for generic Substrate (any chain): `5...` addresses. */
export const SS58_GENERIC_PREFIX = 42;

/**
 * The SS58 address of a 32-byte public key (hex) under the generic Substrate prefix (42): one
 * account has one such address whatever network prefix (Polkadot 0, Kusama 2, ...) it was written with.
 */
export function ss58Generic(keyHex: string): string {
  const body = Uint8Array.from([SS58_GENERIC_PREFIX, ...Buffer.from(keyHex, 'hex')]);
  const hash = blake2b(Uint8Array.from([...new TextEncoder().encode('SS58PRE'), ...body]), { dkLen: 64 });
  return base58Encode(Uint8Array.from([...body, hash[0], hash[1]]));
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_MAP = new Map([...BECH32].map((c, i) => [c, i]));

/** The 5-bit values of bech32 text (lower case); null on a character outside the alphabet. */
function bech32Values(text: string): number[] | null {
  const values: number[] = [];
  for (const c of text) {
    const v = BECH32_MAP.get(c);
    if (v === undefined) return null;
    values.push(v);
  }
  return values;
}

/**
 * A segwit address (BIP 173/350): the checksum holds as bech32 (witness v0) or bech32m (v1+),
 * 90 characters at most, a witness version of 0-16, a program of 2-40 bytes (20 or 32 for v0,
 * BIP 141) whose 5-to-8-bit regrouping leaves under 5 padding bits, all zero. The same rules as
 * bitcoin-address-validation applies to Bitcoin's.
 */
function segwitAddressOk(text: string): boolean {
  const lower = text.toLowerCase();
  if (text !== lower && text !== text.toUpperCase()) return false; // mixed case is invalid bech32
  if (text.length > 90) return false;
  const at = lower.lastIndexOf('1');
  const hrp = lower.slice(0, at);
  const data = bech32Values(lower.slice(at + 1));
  if (!data || data.length < 7) return false;
  const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31), ...data];
  for (const v of expanded) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GEN[i];
  }
  // The witness version (first data value) picks the constant: 0 -> bech32, 1..16 -> bech32m.
  const version = data[0];
  if (version > 16 || chk >>> 0 !== (version === 0 ? 1 : 0x2bc830a3)) return false;
  const program = witnessProgramLength(data.slice(1, -6));
  if (program === null || program < 2 || program > 40) return false;
  return version !== 0 || program === 20 || program === 32;
}

/** Bytes of a witness program given as 5-bit groups; null when the padding is 5 bits or more, or not zero. */
function witnessProgramLength(groups: readonly number[]): number | null {
  const bits = groups.length * 5;
  const padding = bits % 8;
  if (padding >= 5) return null;
  if (groups.length > 0 && (groups[groups.length - 1] & ((1 << padding) - 1)) !== 0) return null;
  return (bits - padding) / 8;
}

/**
 * A Bitcoin Cash cashaddr in its one form: the `bitcoincash:` prefix (optional in the spec, shown
 * by wallets) and the payload, lower case. Null when not cashaddr-shaped. Reports and the OFAC
 * list (which omits the prefix) meet on it.
 */
export function canonicalCashaddr(text: string): string | null {
  const payload = /^(?:bitcoincash:)?([qp][02-9ac-hj-np-z]{41})$/i.exec(text)?.[1];
  return payload === undefined ? null : `bitcoincash:${payload.toLowerCase()}`;
}

/**
 * The script a Bitcoin-family address pays to, as `p2pkh:<hash160 hex>` or `p2sh:<hash160 hex>`:
 * for a mainnet legacy base58check address (version 0x00 `1...`, 0x05 `3...`; the same on
 * Bitcoin, Bitcoin Cash and Bitcoin SV) and for a Bitcoin Cash cashaddr of a 160-bit hash (type
 * 0 or 1). The two spellings of one Bitcoin Cash address (OFAC's BCH list mixes them) meet on it.
 * Null for anything else (a bad base58 checksum, testnet, P2SH32, other chains).
 */
export function bitcoinScriptKey(text: string): string | null {
  const cash = canonicalCashaddr(text);
  if (cash !== null) {
    if (!cashaddrChecksumOk(cash)) return null;
    const bytes = fromFiveBit(bech32Values(cash.slice('bitcoincash:'.length))?.slice(0, -8) ?? []);
    // Version byte: type in bits 3-6 (0 P2PKH, 1 P2SH), hash size in bits 0-2 (0: 160 bits).
    if (bytes === null || bytes.length !== 21 || (bytes[0] & 0x87) !== 0) return null;
    const type = bytes[0] >> 3;
    return type > 1 ? null : `${type === 0 ? 'p2pkh' : 'p2sh'}:${Buffer.from(bytes.subarray(1)).toString('hex')}`;
  }
  if (!/^[13][1-9A-HJ-NP-Za-km-z]{25,34}$/.test(text) || !base58CheckOk(text)) return null;
  const bytes = base58Decode(text)!;
  if (bytes.length !== 25 || (bytes[0] !== 0x00 && bytes[0] !== 0x05)) return null;
  return `${bytes[0] === 0 ? 'p2pkh' : 'p2sh'}:${Buffer.from(bytes.subarray(1, 21)).toString('hex')}`;
}

/** 5-bit groups regrouped as bytes; null when the padding is not zero bits (fewer than 5). */
function fromFiveBit(groups: readonly number[]): Uint8Array | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  for (const g of groups) {
    acc = ((acc << 5) | g) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  if (bits >= 5 || (acc & ((1 << bits) - 1)) !== 0) return null;
  return Uint8Array.from(out);
}

/** Bitcoin Cash cashaddr: the 40-bit BCH checksum over the prefix (default `bitcoincash`) and payload. */
function cashaddrChecksumOk(text: string): boolean {
  const lower = text.toLowerCase();
  if (text !== lower && text !== text.toUpperCase()) return false; // mixed case is invalid cashaddr
  const [prefix, payload] = lower.includes(':') ? lower.split(':') : ['bitcoincash', lower];
  const data = bech32Values(payload);
  if (!data) return false;
  const GEN = [0x98f2bc8e61n, 0x79b76d99e2n, 0xf33e5fb3c4n, 0xae2eabe2a8n, 0x1e4f43e470n];
  let c = 1n;
  for (const d of [...[...prefix].map((ch) => ch.charCodeAt(0) & 31), 0, ...data]) {
    const c0 = c >> 35n;
    c = ((c & 0x07ffffffffn) << 5n) ^ BigInt(d);
    for (let i = 0; i < 5; i++) if ((c0 >> BigInt(i)) & 1n) c ^= GEN[i];
  }
  return (c ^ 1n) === 0n;
}

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
type Check = (text: string) => boolean;

/**
 * The chains whose base58check addresses (a version byte, a 20-byte hash, a 4-byte checksum)
 * are told apart by their version byte, not their first letter: Dogecoin's and Bitcoin Gold's
 * P2SH addresses both start with `A`, and Dogecoin's also with `9`.
 */
const BASE58_VERSIONS: ReadonlyMap<number, Chain> = new Map([
  [0x41, 'trx'], // Tron, T...
  [0x30, 'ltc'], // Litecoin P2PKH, L...
  [0x32, 'ltc'], // Litecoin P2SH, M... (the older 3... is Bitcoin's version byte: named btc)
  [0x1e, 'doge'], // Dogecoin P2PKH, D...
  [0x16, 'doge'], // Dogecoin P2SH, 9... or A...
  [0x4c, 'dash'], // Dash P2PKH, X...
  [0x10, 'dash'], // Dash P2SH, 7...
  [0x26, 'btg'], // Bitcoin Gold P2PKH, G... (OFAC lists one)
  [0x17, 'btg'], // Bitcoin Gold P2SH, A...
]);
/** The first letters and lengths those version bytes give 25 bytes in base58. */
const VERSIONED_SHAPE = new RegExp(`^[TLMD9AX7G]${BASE58}{32,34}$`);

/** A base58check address of a chain in BASE58_VERSIONS; a bad checksum is reported for the chain its version byte names. */
function versionedAddress(text: string): CryptoAddress | null {
  if (!VERSIONED_SHAPE.test(text)) return null;
  const bytes = base58Decode(text);
  const chain = bytes?.length === 25 ? BASE58_VERSIONS.get(bytes[0]) : undefined;
  return bytes && chain ? { normalized: text, chain, checksumValid: checksumHolds(bytes) } : null;
}

const FORMATS: readonly { chain: Chain; pattern: RegExp; check: Check | 'none' }[] = [
  { chain: 'ltc', pattern: /^ltc1[02-9ac-hj-np-z]{8,86}$/i, check: segwitAddressOk },
  { chain: 'zec', pattern: new RegExp(`^t[13]${BASE58}{33}$`), check: (t) => base58CheckOk(t) },
  { chain: 'bch', pattern: /^(?:bitcoincash:)?(?:[qp][02-9ac-hj-np-z]{41}|[QP][02-9AC-HJ-NP-Z]{41})$/i, check: cashaddrChecksumOk },
  // Monero's checksum (keccak over its block-wise base58) is not checked: format only.
  { chain: 'xmr', pattern: new RegExp(`^[48]${BASE58}{94}(?:${BASE58}{11})?$`), check: 'none' },
  { chain: 'xrp', pattern: /^r[1-9A-HJ-NP-Za-km-z]{24,34}$/, check: (t) => base58CheckOk(t, XRP_B58_MAP) },
];

/** A chain as a refusal names it, with its article: "bad checksum for a Bitcoin address". */
export const CHAIN_NAMES: Readonly<Record<Chain, string>> = {
  btc: 'a Bitcoin',
  evm: 'an EVM (EIP-55 mixed-case)',
  trx: 'a Tron',
  ltc: 'a Litecoin',
  doge: 'a Dogecoin',
  dash: 'a Dash',
  zec: 'a Zcash',
  bch: 'a Bitcoin Cash',
  btg: 'a Bitcoin Gold',
  xmr: 'a Monero',
  xrp: 'an XRP',
  dot: 'an SS58 (Polkadot-family)',
};

/**
 * The chain and checksum of an address; null when the text is no supported chain's address.
 * Order matters where formats overlap: Bitcoin first (a legacy `1...`/`3...` address is also a
 * valid Bitcoin Cash/SV legacy address; we name it btc), then EVM, SS58, the table above.
 */
export function parseCryptoAddress(input: string): CryptoAddress | null {
  const text = input.trim();
  if (text === '' || text.length > 128) return null;
  // Bitcoin (mainnet, testnet, signet, regtest), any script type. The validator throws on
  // anything else, and a throw costs more than the rest of an assessment: only a text of a
  // Bitcoin shape is handed to it.
  if (mayBeBitcoin(text)) {
    try {
      const info = getAddressInfo(text);
      return { normalized: info.bech32 ? text.toLowerCase() : text, chain: 'btc', checksumValid: true, kind: info.type };
    } catch {
      // not a valid Bitcoin address; maybe a Bitcoin-shaped one with a bad checksum, below
    }
  }
  if (EVM_ADDRESS.test(text)) {
    const hex = text.slice(2);
    const lower = hex.toLowerCase();
    const uniform = hex === lower || hex === hex.toUpperCase();
    return { normalized: '0x' + lower, chain: 'evm', checksumValid: uniform || eip55Holds(hex) };
  }
  const ss58 = ss58PublicKey(text);
  if (ss58 && !/^[13]/.test(text)) return ss58Address(text, ss58);
  const versioned = versionedAddress(text);
  if (versioned) return versioned;
  for (const { chain, pattern, check } of FORMATS) {
    if (!pattern.test(text)) continue;
    const normalized = chain === 'bch' ? canonicalCashaddr(text)! : /^ltc1/i.test(text) ? text.toLowerCase() : text;
    return { normalized, chain, checksumValid: check === 'none' || check(text) };
  }
  // Shaped like Bitcoin but failing its checks: a mistyped or forged address.
  if (new RegExp(`^[13]${BASE58}{25,34}$`).test(text) || /^(?:bc|tb)1[02-9ac-hj-np-z]{8,87}$/i.test(text)) {
    return { normalized: /^(?:bc|tb)1/i.test(text) ? text.toLowerCase() : text, chain: 'btc', checksumValid: false };
  }
  if (ss58) return ss58Address(text, ss58);
  return null;
}

/**
 * An SS58 address, normalized to its public key's generic Substrate (prefix 42) address: the
 * Polkadot, Kusama and other network spellings of one account are one identifier (the
 * polkadot-js scam list is compared by public key too). One with a bad checksum keeps its text.
 */
function ss58Address(text: string, ss58: { key: string; checksumValid: boolean }): CryptoAddress {
  return { normalized: ss58.checksumValid ? ss58Generic(ss58.key) : text, chain: 'dot', checksumValid: ss58.checksumValid };
}
