/** `seclookup openapi`: print the OpenAPI 3.1 document, the same one `serve` answers at /v1/openapi.json. */
import { buildOpenApiDocument } from '../openapi/document.js';
import { expectPositionals, parseCommand } from './args.js';
import { EXIT_OK } from './errors.js';
import { out } from './output.js';

export const OPENAPI_HELP = `Usage: seclookup openapi [--compact]

Print the OpenAPI 3.1 document of the HTTP API (every route of every product, its parameters,
result schema, error codes, the Bearer scheme and the limit headers), generated from the
product registry: the same document \`seclookup serve\` answers at GET /v1/openapi.json.

  --compact     one line instead of indented JSON
  -h, --help    show this help`;

export async function runOpenApi(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { compact: { type: 'boolean' } }, 'openapi');
  if (values.help) {
    out(OPENAPI_HELP);
    return EXIT_OK;
  }
  expectPositionals(positionals, [], 'openapi');
  out(JSON.stringify(buildOpenApiDocument(), null, values.compact ? undefined : 2));
  return EXIT_OK;
}
