/**
 * The Redis URLs seclookup takes, parsed without loading ioredis (the CLI checks `--redis`
 * before it loads the stores):
 *
 *   redis://[user:password@]host:port[/db]        one Redis (rediss:// for TLS)
 *   redis+cluster://[user:password@]h1:p1,h2:p2   a Redis Cluster from its seed nodes
 *                                                 (rediss+cluster:// for TLS; db 0 only)
 *
 * Schemes in any letter case. No `?options`: ioredis would read them as connection options over
 * seclookup's own (a `?password=` too, which no redaction would know to hide). No message here
 * repeats the URL: it may hold a password.
 */
import { redactUserinfo } from '../../lib/redact-url.js';

/** One Redis server's address, credentials, database and TLS, as ioredis options take them. */
export interface ServerUrl {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
}

/** A Redis Cluster's seed nodes and the credentials and TLS every node connection uses. */
export interface ClusterUrl {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

const CLUSTER_SCHEME = /^(rediss?)\+cluster:\/\//i;
const SERVER_SCHEME = /^(rediss?):\/\//i;
const DEFAULT_PORT = 6379;

/** True for `redis+cluster://` and `rediss+cluster://` URLs. */
export function isClusterUrl(url: string): boolean {
  return CLUSTER_SCHEME.test(url);
}

/**
 * Why `url` is not a Redis URL seclookup can open, or null when it is one (either form). The
 * reason never repeats the URL.
 */
export function redisUrlProblem(url: string): string | null {
  if (isClusterUrl(url)) {
    try {
      parseClusterUrl(url);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }
  try {
    parseServerUrl(url);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * `redis[s]://[user:password@]host[:port][/db]` as the options ioredis opens it with (parsed here,
 * not by ioredis, which turns TLS on only for a lower-case `rediss:`). Throws an Error whose
 * message names the problem but not the URL.
 */
export function parseServerUrl(url: string): ServerUrl {
  const scheme = SERVER_SCHEME.exec(url);
  if (!scheme) throw new Error('the Redis URL must start with redis://, rediss://, redis+cluster:// or rediss+cluster://');
  let parsed: URL;
  try {
    parsed = new URL(`redis://${url.slice(scheme[0].length)}`);
  } catch {
    throw new Error('the Redis URL is not a valid URL (redis://host:port/db)');
  }
  if (parsed.search !== '' || parsed.hash !== '' || /[?#]/.test(url))
    throw new Error('the Redis URL takes no ?options or #fragment (redis://[user:password@]host:port/db; percent-encode a ? or # in a password)');
  if (parsed.hostname === '') throw new Error('the Redis URL names no host (redis://host:port/db)');
  if (parsed.port === '0') throw new Error('the Redis URL port must be 1 to 65535');
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,9}$/.test(db)) throw new Error('the Redis URL path must be a database number (redis://host:port/db)');
  let username: string | undefined;
  let password: string | undefined;
  try {
    username = decodeURIComponent(parsed.username) || undefined;
    password = decodeURIComponent(parsed.password) || undefined;
  } catch {
    throw new Error('the Redis URL has a badly escaped user or password');
  }
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? DEFAULT_PORT : Number(parsed.port),
    username,
    password,
    db: db === '' ? 0 : Number(db),
    tls: scheme[1].toLowerCase() === 'rediss',
  };
}

/**
 * `redis+cluster://[user:password@]host:port,host:port[/0]` as seed nodes. Hosts are names,
 * IPv4 addresses or `[IPv6]`; a missing port is 6379. Throws an Error whose message names the
 * problem but not the URL.
 */
export function parseClusterUrl(url: string): ClusterUrl {
  const scheme = CLUSTER_SCHEME.exec(url);
  if (!scheme) throw new Error('a Redis Cluster URL starts with redis+cluster:// or rediss+cluster://');
  let rest = url.slice(scheme[0].length);
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at !== -1) {
    const credentials = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = credentials.indexOf(':');
    try {
      username = decodeURIComponent(colon === -1 ? credentials : credentials.slice(0, colon)) || undefined;
      password = colon === -1 ? undefined : decodeURIComponent(credentials.slice(colon + 1)) || undefined;
    } catch {
      throw new Error('the Redis Cluster URL has a badly escaped user or password');
    }
  }
  const slash = rest.indexOf('/');
  if (slash !== -1) {
    const path = rest.slice(slash + 1);
    if (path !== '' && path !== '0') throw new Error('a Redis Cluster has database 0 only (redis+cluster://h1:p1,h2:p2)');
    rest = rest.slice(0, slash);
  }
  const nodes = rest.split(',').map((item) => {
    // Host names as Docker Compose makes them may hold '_'.
    const node = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(item.trim());
    const port = node?.[2] === undefined ? DEFAULT_PORT : Number(node[2]);
    if (!node || port < 1 || port > 65_535) throw new Error('each Redis Cluster seed node must be host:port (redis+cluster://h1:p1,h2:p2)');
    return { host: node[1].replace(/^\[|\]$/g, ''), port };
  });
  return { nodes, username, password, tls: scheme[1].toLowerCase() === 'rediss' };
}

/** The URL with its password replaced by `***`, for messages and logs. */
export function redactRedisUrl(url: string): string {
  if (isClusterUrl(url)) {
    const at = url.lastIndexOf('@');
    if (at === -1) return url;
    const scheme = CLUSTER_SCHEME.exec(url)![0];
    const credentials = url.slice(scheme.length, at);
    const colon = credentials.indexOf(':');
    return colon === -1 ? url : `${scheme}${credentials.slice(0, colon)}:***${url.slice(at)}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(a Redis URL that does not parse)';
  }
  if (parsed.password) parsed.password = '***';
  // An `@` after the host: a password with an unencoded `/`, `?` or `#` (`redis://u:pa/ss@h`)
  // ended the authority early, and the rest of it is in the path, query or fragment.
  if (`${parsed.pathname}${parsed.search}${parsed.hash}`.includes('@')) return redactUserinfo(url);
  // Refused anyway; hidden because ioredis would read ?password= (or any option) from it.
  if (parsed.search) parsed.search = '?***';
  return parsed.toString();
}
