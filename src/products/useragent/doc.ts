import { bool, obj, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import { USER_AGENT_MAX_LENGTH } from './types.js';

const UA = { description: 'The User-Agent string (URL-encoded). Either ua or user_agent.' };
/** In a body: a JSON string holds the value itself; a form encodes it as forms do. */
const UA_IN_BODY = 'The User-Agent string: as is in a JSON body, form-encoded in a form body. Either ua or user_agent.';
const nameVersion = (what: string) =>
  obj({ name: str(`${what} name, when recognized.`), version: str(`${what} version, when available.`) }, { optional: ['name', 'version'] });

export const USERAGENT_DOC: ProductDoc = {
  summary: 'Parses a User-Agent string into browser, OS, device class, bot flag and engine.',
  query: { ua: UA, user_agent: UA },
  // The first non-empty string of the two (route.ts bodyString); other members are not read.
  body: {
    ...obj({ ua: str(UA_IN_BODY), user_agent: str(UA_IN_BODY) }, { optional: ['ua', 'user_agent'] }),
    anyOf: [
      { required: ['ua'], properties: { ua: { type: 'string', minLength: 1 } } },
      { required: ['user_agent'], properties: { user_agent: { type: 'string', minLength: 1 } } },
    ],
  },
  result: obj(
    {
      user_agent: str(`The input, truncated to ${USER_AGENT_MAX_LENGTH} characters.`),
      browser: nameVersion('Browser'),
      os: nameVersion('Operating system'),
      device_type: str('desktop, mobile, tablet, smarttv, console, wearable, embedded or unknown.'),
      is_bot: bool('True for crawlers, bots, HTTP libraries and headless browsers.'),
      engine: str('Rendering engine, when detected.'),
    },
    { optional: ['engine'] },
  ),
  batchInput: { description: 'A User-Agent string, exactly as the client sent it: not percent-encoded.' },
  errors: ['invalid_user_agent'],
};
