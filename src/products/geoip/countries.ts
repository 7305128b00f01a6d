/**
 * What a country code says on its own: its continent, its English name and whether it is in the
 * European Union. DB-IP Lite records carry only the code; MaxMind records carry their own names
 * and EU flag, and these tables fill only what a record leaves out.
 *
 * Continents follow GeoNames' assignment (the one MaxMind's GeoIP2 data uses, so both providers
 * agree): Turkey, Armenia, Azerbaijan, Georgia and Kazakhstan are Asia, Russia and Cyprus are
 * Europe, Egypt is Africa, Panama and the Caribbean are North America. The test suite checks the
 * table against every country/continent pair in MaxMind's test databases.
 */

/** Continent codes (GeoNames, MaxMind) and SPEC's `continent` string for each. */
export const CONTINENT_NAMES: Readonly<Record<string, string>> = Object.freeze({
  AF: 'Africa',
  AN: 'Antarctica',
  AS: 'Asia',
  EU: 'Europe',
  NA: 'North America',
  OC: 'Oceania',
  SA: 'South America',
});

/** ISO 3166-1 alpha-2 codes (and XK, Kosovo, which registries use) by continent code. */
const COUNTRIES_BY_CONTINENT: Readonly<Record<keyof typeof CONTINENT_NAMES & string, string>> = {
  AF:
    'AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL ' +
    'SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW',
  AN: 'AQ BV GS HM TF',
  AS:
    'AE AF AM AZ BD BH BN BT CC CN GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH ' +
    'TJ TL TM TR TW UZ VN YE',
  EU:
    'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS ' +
    'RU SE SI SJ SK SM UA VA XK',
  NA: 'AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI PA PM PR SV SX TC TT US VC VG VI',
  OC: 'AS AU CK CX FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV UM VU WF WS',
  SA: 'AR BO BR CL CO EC FK GF GY PE PY SR UY VE',
};

const CONTINENT_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(COUNTRIES_BY_CONTINENT).flatMap(([continent, codes]) => codes.split(' ').map((code) => [code, continent] as const)),
);

/**
 * The 27 member states of the European Union (since the United Kingdom left on 2020-01-31).
 * Outermost regions with their own ISO codes (RE, GP, MQ, GF, YT, MF) are part of the EU too,
 * but registries and geolocation providers report them as such codes rarely and MaxMind does
 * not flag them, so they are left out, as are the EEA members (IS, LI, NO) and Switzerland.
 */
export const EU_MEMBERS: ReadonlySet<string> = new Set('AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '));

/**
 * Where `Intl.DisplayNames` adds a qualifier the usual English short name does not have
 * ("Hong Kong SAR China", "Myanmar (Burma)"), the name GeoNames and MaxMind use instead.
 */
const NAME_OVERRIDES: Readonly<Record<string, string>> = {
  HK: 'Hong Kong',
  MO: 'Macao',
  MM: 'Myanmar',
  PS: 'Palestine',
  CD: 'DR Congo',
  CG: 'Congo Republic',
};

/** True for a code in the tables above: a real country or territory, not `ZZ`, `EU` or `AP`. */
export function isKnownCountry(code: string): boolean {
  return CONTINENT_OF.has(code);
}

/** The continent code of a country code, or undefined for an unknown code. */
export function continentCodeOf(countryCode: string): string | undefined {
  return CONTINENT_OF.get(countryCode);
}

/** SPEC's continent string ("North America") of a country code, or null. */
export function continentOf(countryCode: string): string | null {
  const continent = CONTINENT_OF.get(countryCode);
  return continent === undefined ? null : CONTINENT_NAMES[continent];
}

let displayNames: Intl.DisplayNames | undefined;
const nameCache = new Map<string, string | null>();

/**
 * The English name of a known country code ("United States"), from `Intl.DisplayNames` (made
 * once, names memoised per code), or null for a code the tables do not know.
 */
export function countryNameOf(code: string): string | null {
  let name = nameCache.get(code);
  if (name !== undefined) return name;
  if (!isKnownCountry(code)) {
    name = null;
  } else {
    displayNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    name = NAME_OVERRIDES[code] ?? displayNames.of(code) ?? null;
  }
  nameCache.set(code, name); // bounded: only the ~250 known codes and the unknown ones seen, each once
  if (nameCache.size > 1024) nameCache.clear();
  return name;
}

/** Every country code of the tables, for tests. */
export function knownCountryCodes(): string[] {
  return [...CONTINENT_OF.keys()];
}
