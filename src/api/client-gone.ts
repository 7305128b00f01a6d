import { clientGoneRefusal } from '../errors.js';

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
