import { type LookupError, refusal } from '../errors.js';

/**
 * `work`, or a rejection as soon as `signal` aborts (the client is gone), whichever comes
 * first. The abandoned lookup runs on unheard: no engine takes a signal, and its own deadlines
 * end it.
 */
export function unlessClientGone<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(clientGone());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(clientGone());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The answer to a request whose client left before it was answered: nobody reads it, it is only
 * logged. 499, as for a body cut short (body.ts) and as nginx logs it: the client's doing, not an
 * upstream failure (a 502 here read as an outage on a dashboard of 5xx rates).
 */
export function clientGone(): LookupError {
  return refusal('client_closed_request', 'the client closed the connection before the answer; not billed');
}
