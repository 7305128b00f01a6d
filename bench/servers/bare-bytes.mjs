/**
 * The baseline of `npm run bench -- routes`, run as its own process:
 * `node bare-bytes.mjs <answers.json>`. A bare `http.createServer` that answers each request
 * with the bytes `seclookup serve` answered the same request with (captured by the bench), on
 * two ports: `two` sends them with two headers (content-type and content-length, the usual
 * bare server), `same` with every header serve sent (the ceiling while the header contract
 * stands). A POST's body is read and, when JSON, parsed before answering, as any server must.
 * Prints `{ "two": port, "same": port }` and serves until SIGTERM.
 *
 * answers.json: `[{ "method", "url", "status", "body", "headers" }]`, one per route.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const answers = JSON.parse(readFileSync(process.argv[2], 'utf8'));
/** Headers Node writes itself on a keep-alive answer. */
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function table(withAllHeaders) {
  const byRequest = new Map();
  for (const answer of answers) {
    const body = Buffer.from(answer.body, 'utf8');
    const headers = withAllHeaders
      ? Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !NODE_OWN.has(name)))
      : { 'content-type': answer.headers['content-type'], 'content-length': String(body.length) };
    byRequest.set(`${answer.method} ${answer.url}`, { status: answer.status, headers, body });
  }
  return byRequest;
}

function listen(byRequest) {
  const server = createServer((req, res) => {
    const answer = byRequest.get(`${req.method} ${req.url}`);
    const reply = () => {
      if (!answer) return res.writeHead(404, { 'content-type': 'text/plain', 'content-length': '9' }).end('not found');
      res.writeHead(answer.status, answer.headers).end(answer.body);
    };
    if (req.method !== 'POST') return reply();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if ((req.headers['content-type'] ?? '').startsWith('application/json')) JSON.parse(text || '{}');
      else new URLSearchParams(text);
      reply();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const two = await listen(table(false));
const same = await listen(table(true));
process.stdout.write(`${JSON.stringify({ two: two.address().port, same: same.address().port })}\n`);
process.once('SIGTERM', () => {
  two.close();
  same.close();
  process.exit(0);
});
