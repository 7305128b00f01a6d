/**
 * The timezone lookup result (SPEC: timezone lookup result). Every field is always present;
 * what is not known is null (ours).
 */
export interface TimezoneResult {
  /** The IP looked up, canonical (an IPv4-mapped IPv6 input is its IPv4 address). */
  ip: string;
  timezone: {
    /** IANA id: the geolocation database's, else from the coordinates it gives. */
    id: string | null;
    /** UTC offset at the time of the lookup, `+HH:MM` or `-HH:MM`; null when the id is null. */
    utc_offset: string | null;
    /**
     * Short abbreviation at the time of the lookup, as the tz database writes it (EST, CEST, JST, MSK;
     * `+0545` or `-03` where tzdata itself uses a number); null when the zone is unknown, never `GMT+3`.
     */
    abbreviation: string | null;
  };
  country: {
    /** ISO 3166-1 alpha-2. */
    code: string | null;
  };
  city: string | null;
}
