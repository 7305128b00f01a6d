/**
 * `createApi({ logger })`: the request lines and errors `serve` writes to its own log, sent to an
 * app's pino logger instead, so an app that has one finds our lines in its log.
 */
import { describeError } from '../lib/describe-error.js';
import type { ApiOptions } from './types.js';

/** The options with `logger` folded into `onResponse` and `onError` (both still called). */
export function withLogger(options: ApiOptions): ApiOptions {
  const { logger, onResponse, onError } = options;
  if (!logger) return options;
  return {
    ...options,
    onResponse(event) {
      // The logger stamps its own time; a second `time` would give the line two clocks.
      const { time: _time, ...fields } = event;
      logger.info(fields, 'request');
      onResponse?.(event);
    },
    onError(error, context) {
      logger.error({ context, error: describeError(error) }, 'unexpected error');
      onError?.(error, context);
    },
  };
}
