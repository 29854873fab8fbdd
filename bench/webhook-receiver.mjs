// A webhook receiver for the bench, in its own process (as a real receiver would be): verifies
// every signature with the standardwebhooks library and records when each delivery arrived.
// Talks to the bench over IPC: {secrets, failFirst} in, {port} out; 'stats' and 'dump' requests.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const now = () => performance.timeOrigin + performance.now();
let verifiers = [];
let failFirst = false;
const seen = new Set();
const arrivals = new Map();
let verified = 0;
let rejected = 0;
let failedOnPurpose = 0;
let bodyBytes = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const index = Number(req.url.split('/').pop());
    const key = `${index}:${req.headers['webhook-id']}`;
    if (failFirst && !seen.has(key)) {
      seen.add(key);
      failedOnPurpose++;
      res.writeHead(500).end();
      return;
    }
    try {
      verifiers[index].verify(body, req.headers);
      verified++;
      bodyBytes = body.length;
      if (!arrivals.has(key)) arrivals.set(key, now());
      res.writeHead(204).end();
    } catch {
      rejected++;
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (message) => {
  if (message.type === 'start') {
    verifiers = message.secrets.map((s) => new Webhook(s));
    failFirst = message.failFirst;
    server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
  } else if (message.type === 'stats') {
    process.send({ type: 'stats', arrived: arrivals.size });
  } else if (message.type === 'dump') {
    // Exit only once the (large) message is written: process.exit would drop it.
    process.send({ type: 'dump', arrivals: [...arrivals], verified, rejected, failedOnPurpose, bodyBytes }, () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  }
});
