/**
 * Loopback TLS fixtures for tests (and benches) of code that connects to TLS servers: test
 * certificates minted on the fly, real TLS servers on 127.0.0.1 (or ::1) serving them (one
 * certificate, or several chosen by SNI), and hostile TCP servers that never complete a
 * handshake. No test may reach the internet; use these.
 *
 * Certificates: node-forge builds the X.509 structure (names, validity, extensions) and Node's
 * crypto makes the keys and signs, so RSA and ECDSA certificates come out the same way with no
 * openssl binary (forge alone can neither sign with ECDSA nor make RSA keys quickly).
 *
 * @example
 * const ca = mintCertificate({ subject: 'Test CA', ca: true });
 * const leaf = mintCertificate({ subject: 'valid.tls.test', dnsNames: ['valid.tls.test'], issuer: ca, keyType: 'rsa' });
 * const server = await startTlsServer({ certificate: leaf, chain: [ca] });
 * // ... connect to 127.0.0.1:server.port with servername valid.tls.test
 * await server.close();
 */
import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import forge from 'node-forge';

const { asn1, pki } = forge;

export type KeyType = 'rsa' | 'ec';

export interface TestKey {
  type: KeyType;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** PKCS#8 PEM of the private key, as `tls.createSecureContext` takes it. */
  pem: string;
}

/** One attribute of a distinguished name, in certificate (most general first) order. */
export interface NameAttribute {
  /** `CN`, `O`, `OU`, `C`, `L`, `ST`, `E` (forge's short names), or a dotted OID in `type`. */
  shortName?: string;
  type?: string;
  value: string;
}

/** A Subject Alternative Name of a kind other than dNSName, as forge encodes it. */
export type OtherAltName = { type: 'ip'; ip: string } | { type: 'email'; value: string } | { type: 'uri'; value: string };

export interface MintOptions {
  /** The subject: a common name, or attributes in order (`[{ shortName: 'O', value: 'X' }, { shortName: 'CN', value: 'y' }]`). @default no subject */
  subject?: string | NameAttribute[];
  /** dNSName SANs, written as given (use punycode for IDN; anything else is written raw, for hostile names). */
  dnsNames?: string[];
  /** Other SANs (IP, e-mail, URI), written after the DNS names. */
  otherNames?: OtherAltName[];
  /** The certificate that signs this one; @default self-signed */
  issuer?: TestCertificate;
  /** The key pair to certify. @default a shared key of `keyType` */
  key?: TestKey;
  /** @default 'ec' (P-256; fast) */
  keyType?: KeyType;
  /** @default one day ago (whole seconds) */
  notBefore?: Date;
  /** @default 90 days from now (whole seconds) */
  notAfter?: Date;
  /** A CA certificate (basicConstraints cA, keyCertSign). @default false */
  ca?: boolean;
  /** Hex serial number. @default 16 random bytes */
  serial?: string;
}

export interface TestCertificate {
  pem: string;
  der: Buffer;
  key: TestKey;
  /** SHA-256 of the DER, lowercase hex without separators (what the tls product reports). */
  fingerprint256: string;
  notBefore: Date;
  notAfter: Date;
  /** The subject as forge attributes, for certificates this one issues. */
  subjectAttributes: forge.pki.CertificateField[];
  /** Node's reading of the certificate. */
  x509: X509Certificate;
}

const DAY_MS = 86_400_000;
const OID_SHA256_WITH_RSA = '1.2.840.113549.1.1.11';
const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const sharedKeys = new Map<KeyType, TestKey>();

/** A fresh key pair: RSA 2048 (about 50-200 ms) or EC P-256 (about 1 ms). */
export function generateKey(type: KeyType = 'ec'): TestKey {
  const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { type, ...pair, pem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** One key per type for the whole process, so tests that mint many certificates stay fast. */
export function sharedKey(type: KeyType = 'ec'): TestKey {
  let key = sharedKeys.get(type);
  if (!key) sharedKeys.set(type, (key = generateKey(type)));
  return key;
}

/** Whole seconds, as certificates hold them. */
function seconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function toAttributes(subject: MintOptions['subject']): forge.pki.CertificateField[] {
  if (subject === undefined) return [];
  const list = typeof subject === 'string' ? [{ shortName: 'CN', value: subject }] : subject;
  // UTF8String for everything, so any text can go in (forge would default to PrintableString).
  return list.map((a) => ({ ...a, valueTagClass: asn1.Type.UTF8 }) as unknown as forge.pki.CertificateField);
}

/** A DER tree node from Node's bytes. */
function fromDer(der: Buffer): forge.asn1.Asn1 {
  return asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
}

/**
 * Mint a certificate. Self-signed unless `issuer` is given; whatever it holds (dates in the past
 * or the future, odd names) is written as asked: these are for tests, not for trust.
 */
export function mintCertificate(options: MintOptions = {}): TestCertificate {
  const key = options.key ?? sharedKey(options.keyType ?? 'ec');
  const notBefore = seconds(options.notBefore ?? new Date(Date.now() - DAY_MS));
  const notAfter = seconds(options.notAfter ?? new Date(Date.now() + 90 * DAY_MS));
  const subjectAttributes = toAttributes(options.subject);
  const signer = options.issuer?.key ?? key;

  const cert = pki.createCertificate();
  // A positive INTEGER: clear the top bit.
  const serial =
    options.serial ??
    randomBytes(16)
      .toString('hex')
      .replace(/^./, (c) => (parseInt(c, 16) & 7).toString(16));
  cert.serialNumber = serial;
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject(subjectAttributes);
  cert.setIssuer(options.issuer ? options.issuer.subjectAttributes : subjectAttributes);
  const extensions: object[] = [];
  if (options.ca) {
    extensions.push(
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    );
  } else {
    extensions.push({ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: key.type === 'rsa', critical: true });
    extensions.push({ name: 'extKeyUsage', serverAuth: true });
  }
  const altNames = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(options.otherNames ?? []).map((n) => (n.type === 'ip' ? { type: 7, ip: n.ip } : { type: n.type === 'email' ? 1 : 6, value: n.value })),
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  cert.setExtensions(extensions);
  // forge builds the TBSCertificate around an RSA key; the real key and algorithm go in after.
  cert.publicKey = pki.rsa.setPublicKey(new forge.jsbn.BigInteger('65537'), new forge.jsbn.BigInteger('65537'));
  cert.siginfo.algorithmOid = OID_SHA256_WITH_RSA;
  // getTBSCertificate exists in forge but is missing from @types/node-forge.
  const tbs = (pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  const algorithm = algorithmIdentifier(signer.type);
  const fields = tbs.value as forge.asn1.Asn1[];
  fields[2] = algorithm;
  fields[6] = fromDer(key.publicKey.export({ type: 'spki', format: 'der' }));
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign('sha256', tbsDer, signer.privateKey); // ECDSA: DER (r, s), as X.509 wants
  const certificate = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    algorithmIdentifier(signer.type),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, String.fromCharCode(0) + signature.toString('binary')),
  ]);
  const der = Buffer.from(asn1.toDer(certificate).getBytes(), 'binary');
  const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  return {
    pem,
    der,
    key,
    fingerprint256: createHash('sha256').update(der).digest('hex'),
    notBefore,
    notAfter,
    subjectAttributes,
    x509: new X509Certificate(der),
  };
}

function algorithmIdentifier(type: KeyType): forge.asn1.Asn1 {
  const oid = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(type === 'rsa' ? OID_SHA256_WITH_RSA : OID_ECDSA_WITH_SHA256).getBytes());
  // RSA carries an explicit NULL; ECDSA no parameters at all (RFC 5758 3.2).
  return asn1.create(
    asn1.Class.UNIVERSAL,
    asn1.Type.SEQUENCE,
    true,
    type === 'rsa' ? [oid, asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')] : [oid],
  );
}

// ---------------------------------------------------------------------------------------------
// TLS servers

export interface TlsServerOptions {
  /** The certificate served when no SNI entry matches (or no SNI is sent). */
  certificate: TestCertificate;
  /** Intermediate / CA certificates sent after the leaf. */
  chain?: TestCertificate[];
  /**
   * Certificates by exact server name (lower case), chosen with SNICallback. On TLS 1.3, give
   * them the default certificate's key type: Node (OpenSSL 3) keeps serving an ECDSA default
   * when the SNI context holds only an RSA certificate.
   */
  sni?: Record<string, TestCertificate>;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  /** OpenSSL cipher string (`DEFAULT:@SECLEVEL=0` lets TLS 1.0/1.1 through). */
  ciphers?: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** Demand a client certificate, as an mTLS endpoint does (a client without one is refused with an alert). */
  requireClientCertificate?: boolean;
}

export interface TlsTestServer {
  port: number;
  host: string;
  /** TCP connections accepted: counted as they arrive, so a client that finished a handshake has been counted. */
  connections(): number;
  /**
   * The server name each completed handshake asked for (false: no SNI), in order. The server
   * sees a handshake complete after the client does: read this after `settled()`.
   */
  servernames: (string | false)[];
  /** Resolves once every connection accepted so far has closed (within 2 s). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

function contextOptions(certificate: TestCertificate, chain: TestCertificate[] = []): tls.SecureContextOptions {
  return { cert: [certificate, ...chain].map((c) => c.pem).join(''), key: certificate.key.pem };
}

/** A real TLS server that completes handshakes and then closes the connection. */
export async function startTlsServer(options: TlsServerOptions): Promise<TlsTestServer> {
  const servernames: (string | false)[] = [];
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const base = { minVersion: options.minVersion, maxVersion: options.maxVersion, ciphers: options.ciphers };
  const contexts = new Map(
    Object.entries(options.sni ?? {}).map(([name, cert]) => [name.toLowerCase(), tls.createSecureContext({ ...base, ...contextOptions(cert, options.chain) })]),
  );
  const server = tls.createServer({
    ...base,
    ...contextOptions(options.certificate, options.chain),
    SNICallback: contexts.size > 0 ? (name, callback) => callback(null, contexts.get(name.toLowerCase())) : undefined,
    requestCert: options.requireClientCertificate === true,
    rejectUnauthorized: options.requireClientCertificate === true,
  });
  server.on('connection', (socket: net.Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    servernames.push((socket as tls.TLSSocket & { servername: string | false }).servername);
    socket.on('error', () => {});
    socket.end();
  });
  server.on('tlsClientError', () => {});
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    host,
    servernames,
    connections: () => accepted,
    settled: () => settled(sockets),
    close: () => closeServer(server, sockets),
  };
}

export type HostileBehaviour =
  /** Accepts, reads, never writes, never closes: a handshake that never completes. */
  | 'silent'
  /** Answers the ClientHello with plain text (an HTTP error page) and stays open. */
  | 'garbage'
  /** Sends a plain-text banner (as SSH or SMTP do) as soon as it accepts, and stays open. */
  | 'banner'
  /** Closes (FIN) as soon as it accepts. */
  | 'close'
  /** Resets (RST) the connection when the ClientHello arrives. */
  | 'reset'
  /** Holds the connection `delayMs`, then relays it to `target` (a real TLS server). */
  | 'slow';

export interface HostileServerOptions {
  /** 'slow' only: the TLS server relayed to. */
  target?: TlsTestServer;
  /** 'slow' only. @default 500 */
  delayMs?: number;
}

export interface HostileTestServer {
  port: number;
  host: string;
  /** Connections accepted. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP server on 127.0.0.1 that misbehaves as a TLS server in one of the ways above. */
export async function startHostileServer(behaviour: HostileBehaviour, options: HostileServerOptions = {}): Promise<HostileTestServer> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    switch (behaviour) {
      case 'silent':
        socket.resume();
        break;
      case 'garbage':
        socket.once('data', () => socket.write('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nnot TLS :-)'));
        break;
      case 'banner':
        socket.write('SSH-2.0-OpenSSH_9.6p1 Debian-3\r\n');
        socket.resume();
        break;
      case 'close':
        socket.end();
        break;
      case 'reset':
        socket.once('data', () => socket.resetAndDestroy());
        break;
      case 'slow': {
        if (!options.target) throw new Error("the 'slow' behaviour needs a target TLS server");
        const target = options.target;
        socket.pause();
        const timer = setTimeout(() => {
          timers.delete(timer);
          const upstream = net.connect(target.port, target.host);
          sockets.add(upstream);
          upstream.on('close', () => sockets.delete(upstream));
          upstream.on('error', () => socket.destroy());
          socket.on('close', () => upstream.destroy());
          socket.pipe(upstream).pipe(socket);
          socket.resume();
        }, options.delayMs ?? 500);
        timers.add(timer);
        break;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
    connections: () => accepted,
    close: () => {
      timers.forEach(clearTimeout);
      return closeServer(server, sockets);
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (connections are refused). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function settled(sockets: Set<net.Socket>): Promise<void> {
  for (let waited = 0; sockets.size > 0 && waited < 2_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
}

function closeServer(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}
