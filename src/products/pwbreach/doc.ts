import { bool, int, obj, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import { PADDING_EXTRA, PADDING_MIN } from './range.js';
import { MAX_PASSWORD_BYTES } from './types.js';

const SHA1 = { pattern: '^[0-9A-Fa-f]{40}$' };

export const PWBREACH_DOC: ProductDoc = {
  summary:
    'Reports whether a password (or its SHA-1 hex) appears in breach data and how often. Answers never contain the password or the hash. ' +
    'A password is never taken from a URL: a password query parameter on either lookup route is 400 invalid_password.',
  query: {
    sha1: {
      description: 'SHA-1 of the password: 40 hexadecimal characters, either case. Plaintext passwords are never sent on GET.',
      required: true,
      schema: str(undefined, SHA1),
    },
  },
  // engine.ts prepare: one of the two, the other absent, null or empty; other members are not read.
  body: {
    ...obj(
      {
        password: {
          type: ['string', 'null'],
          maxLength: MAX_PASSWORD_BYTES,
          description: `The password (at most ${MAX_PASSWORD_BYTES} UTF-8 bytes); also as an HTML form field. It is hashed and dropped.`,
        },
        sha1: { type: ['string', 'null'], pattern: '^([0-9A-Fa-f]{40})?$', description: 'Its SHA-1: 40 hexadecimal characters, either case.' },
      },
      {
        optional: ['password', 'sha1'],
        description: 'Exactly one of password and sha1; the other absent, null or empty (an HTML form sends empty fields). Other members are ignored.',
      },
    ),
    oneOf: [
      { required: ['password'], properties: { password: { type: 'string', minLength: 1 } } },
      { required: ['sha1'], properties: { sha1: { type: 'string', minLength: 1 } } },
    ],
  },
  result: obj({
    breached: bool('True if the password appears in breach data.'),
    count: int('Occurrence count; 0 when not breached.', { minimum: 0 }),
  }),
  batchInput: { description: 'The SHA-1 of a password: 40 hexadecimal characters, either case. Never the password itself.', schema: str(undefined, SHA1) },
  errors: ['invalid_password', 'lookup_failed'],
  extraRoutes: {
    'range/:prefix': {
      summary: 'The SHA-1 suffixes and counts under a 5-hex-digit prefix (k-anonymity range API)',
      description:
        'The range API of Have I Been Pwned: the client sends the first 5 hex digits of the hash, never the hash. ' +
        'Answers `SUFFIX:COUNT` lines (35 upper-case hex digits, a colon, the count), ascending, joined by CRLF, no line break after the last; ' +
        'an empty body for a prefix with no hashes. Metered like a lookup. Errors are the JSON envelope.',
      pathParam: { description: 'The first 5 hexadecimal characters of the SHA-1 hash, either case.', schema: str(undefined, { pattern: '^[0-9A-Fa-f]{5}$' }) },
      query: {
        mode: {
          description: 'Only sha1 (any case) is served; any other value is 400 invalid_request.',
          schema: str(undefined, { pattern: '^[Ss][Hh][Aa]1$' }),
        },
      },
      headers: {
        'Add-Padding': {
          description: `true (any case) mixes fake suffixes with count 0 in, to at least ${PADDING_MIN} lines then 0-${PADDING_EXTRA} more, so the size of the answer says nothing about the prefix. Any other value: no padding.`,
        },
      },
      result: { contentType: 'text/plain', schema: str(), example: '0018A45C4D1DEF81644B54AB7F969B88D65:10\r\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2' },
      errors: ['invalid_request', 'lookup_failed'],
    },
  },
};
