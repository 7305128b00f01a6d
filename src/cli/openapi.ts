/** `seclookup openapi`: print the OpenAPI 3.1 document, the one `serve` answers at /v1/openapi.json. */
import { BATCH_LIMIT_RANGE, DEFAULT_BATCH_LIMIT } from '../api/batch.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { expectPositionals, parseCommand, parseInteger } from './args.js';
import { EXIT_OK } from './errors.js';
import { out } from './output.js';

export const OPENAPI_HELP = `Usage: seclookup openapi [--batch-limit N] [--compact]

Print the OpenAPI 3.1 document of the HTTP API (every route of every product, its parameters,
result schema, error codes, the Bearer scheme and the limit headers), generated from the
product registry. It is the document \`seclookup serve\` answers at GET /v1/openapi.json when
serve runs with the same batch limit: give the limit serve has (its --batch-limit, "batch-limit"
in its config file or $SECLOOKUP_BATCH_LIMIT), or the batch routes' maxItems differ.

  --batch-limit N   the batch routes' maxItems (default: ${DEFAULT_BATCH_LIMIT}, serve's default; 1 to ${BATCH_LIMIT_RANGE.max})
  --compact         one line instead of indented JSON
  -h, --help        show this help`;

export async function runOpenApi(argv: string[]): Promise<number> {
  const command = 'openapi';
  const { values, positionals } = parseCommand(argv, { compact: { type: 'boolean' }, 'batch-limit': { type: 'string' } }, command);
  if (values.help) {
    out(OPENAPI_HELP);
    return EXIT_OK;
  }
  expectPositionals(positionals, [], command);
  const limit = values['batch-limit'];
  const batchLimit = limit === undefined ? undefined : parseInteger(limit, '--batch-limit', command, BATCH_LIMIT_RANGE);
  out(JSON.stringify(buildOpenApiDocument({ batchLimit }), null, values.compact ? undefined : 2));
  return EXIT_OK;
}
