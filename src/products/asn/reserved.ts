/**
 * AS numbers that name no network on the public Internet, so an origin AS among them says
 * nothing about who operates the address (IANA's "Autonomous System (AS) Numbers" registry):
 * 0 (RFC 7607, never announced), 23456 (AS_TRANS, RFC 6793), 64496-64511 and 65536-65551
 * (documentation, RFC 5398), 64512-65534 and 4200000000-4294967294 (private use, RFC 6996),
 * 65535 and 4294967295 (last of each range, RFC 7300), and 65552-131071 (reserved by IANA).
 * A data source that gives one (a route leaked with a private AS, a placeholder row) is read as
 * having no AS for that address.
 */
export function isReservedAsn(asn: number): boolean {
  return asn === 0 || asn === 23456 || (asn >= 64496 && asn <= 131071) || asn >= 4200000000;
}
