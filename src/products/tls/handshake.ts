/**
 * One TLS handshake to read the certificate a server presents: connect to the address the
 * outbound guard checked (never to the name again), send the name as SNI, do not verify the
 * chain (an expired or self-signed certificate is exactly what a caller wants to see), take
 * the leaf certificate and the negotiated protocol, and close.
 */
import { constants, type X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { SeclookupError } from '../../errors.js';
import { upstreamEnd, upstreamStart } from '../../lib/observe.js';

export interface HandshakeTarget {
  /** The checked address to connect to. */
  address: string;
  port: number;
  /** The name to send as SNI; none for an IP literal (RFC 6066 forbids addresses there). */
  servername?: string;
}

export interface Handshake {
  certificate: X509Certificate;
  /** `TLSv1.3`, ...; null when Node cannot tell. */
  protocol: string | null;
}

/**
 * One client context for every handshake: no verification (the certificate is reported, not
 * trusted) and every protocol from TLS 1.0 up, at OpenSSL security level 0, so the
 * certificates of old servers can be read too. Nothing secret is ever sent on these
 * connections. Shared, because making a context per connection costs more than the rest of
 * the client's work.
 */
let sharedContext: tls.SecureContext | undefined;
function clientContext(): tls.SecureContext {
  // SSL_OP_LEGACY_SERVER_CONNECT: OpenSSL 3 no longer sets it, and refuses any server without
  // RFC 5746 secure renegotiation (ERR_SSL_UNSAFE_LEGACY_RENEGOTIATION_DISABLED), so the
  // certificates of those old servers could not be read. Renegotiation is never used here.
  return (sharedContext ??= tls.createSecureContext({
    minVersion: 'TLSv1',
    ciphers: 'DEFAULT:@SECLEVEL=0',
    secureOptions: constants.SSL_OP_LEGACY_SERVER_CONNECT,
  }));
}

const skipIdentityCheck = (): undefined => undefined;

/** The alerts a server sends when it wants a client certificate we did not give (OpenSSL's codes, as Node names them). */
const CLIENT_CERTIFICATE_REFUSED = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_(?:HANDSHAKE_FAILURE|BAD_CERTIFICATE|CERTIFICATE_REQUIRED|ACCESS_DENIED)$/;

/**
 * Handshake with `target` within `timeoutMs` (TCP connect and TLS handshake together).
 * Rejects with SeclookupError `timeout` (message `lateMessage`) or `upstream_failed` (refused,
 * reset, closed, not TLS, handshake failure, no certificate), the message saying which.
 * `onSocket` is given the socket as it is made (to hold an outbound slot until it closes).
 */
export function handshake(
  target: HandshakeTarget,
  timeoutMs: number,
  lateMessage = `no TLS handshake within ${timeoutMs} ms`,
  onSocket?: (socket: tls.TLSSocket) => void,
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const started = upstreamStart();
    const socket = tls.connect({
      host: target.address,
      port: target.port,
      servername: target.servername,
      secureContext: clientContext(),
      rejectUnauthorized: false,
      checkServerIdentity: skipIdentityCheck,
    });
    onSocket?.(socket);
    const finish = (error: Error | null, value?: Handshake) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      upstreamEnd('tls', error === null, started);
      if (error) {
        socket.destroy();
        reject(error);
      } else {
        // Flush our Finished message and a close_notify before closing, so the server sees a
        // completed handshake and a clean close rather than an aborted one.
        socket.destroySoon();
        resolve(value!);
      }
    };
    const timer = setTimeout(() => finish(new SeclookupError('timeout', lateMessage)), timeoutMs);
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerX509Certificate();
      if (!certificate) return finish(new SeclookupError('upstream_failed', 'the server presented no certificate'));
      finish(null, { certificate, protocol: socket.getProtocol() });
    });
    socket.on('error', (error: Error & { code?: string }) => {
      // A server that demands a client certificate (mTLS) refuses ours with an alert, on TLS 1.2
      // after its own certificate and signed key exchange arrived (on TLS 1.3 the client is done
      // first and sees no refusal): that certificate is still the one the host presents. Only
      // that refusal: any other failure after the certificate (garbage, a key exchange that does
      // not verify, another alert) is a failed handshake, as before.
      const presented = CLIENT_CERTIFICATE_REFUSED.test(error.code ?? '') ? socket.getPeerX509Certificate() : undefined;
      if (presented) return finish(null, { certificate: presented, protocol: socket.getProtocol() });
      finish(new SeclookupError('upstream_failed', describeError(error), { cause: error }));
    });
    socket.once('close', () => finish(new SeclookupError('upstream_failed', 'the server closed the connection during the TLS handshake')));
  });
}

/** Short, stable words for Node's and OpenSSL's errors. */
function describeError(error: Error & { code?: string; reason?: string }): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return error.message.includes('before secure TLS connection')
        ? 'the server closed the connection during the TLS handshake'
        : 'connection reset during the TLS handshake';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to the host (${error.code})`;
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
    case 'ERR_SSL_PACKET_LENGTH_TOO_LONG':
    case 'ERR_SSL_RECORD_LAYER_FAILURE':
      return `the server does not speak TLS on this port (${error.code})`;
    default:
      return `TLS handshake failed: ${error.code ?? error.message}`;
  }
}
