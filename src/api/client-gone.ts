import { type LookupError, refusal } from '../errors.js';

/**
 * `work`, or a rejection as soon as `signal` aborts (the client is gone), whichever comes
 * first. The abandoned lookup runs on unheard: no engine takes a signal, and its own deadlines
 * end it.
 */
export function unlessClientGone<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(clientGoneRefusal());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(clientGoneRefusal());
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
 * The answer to a request whose connection closed before it was answered: nobody reads it, it is
 * only logged. 499, as for a body cut short (body.ts) and as nginx logs it: almost always the
 * client's leaving, not an upstream failure (a 502 here read as an outage on a dashboard of 5xx
 * rates). The rest are the connections serve cuts at its shutdown deadline (shutdown.ts).
 */
export function clientGoneRefusal(): LookupError {
  return refusal('client_closed_request', 'the connection closed before the answer; not billed');
}
