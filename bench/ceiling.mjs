// The ceiling: a bare node:http server answering every request with a fixed JSON body of SIZE
// bytes. The service's numbers are quoted as ratios to this, measured in the same run.
//
// `node bench/ceiling.mjs --response FILE`: the same-bytes ceiling. FILE is JSON
// `{ status, headers: [[name, value], …], bodyBase64 }`, one response of the service captured
// as it was sent (bench/run.ts); every request is answered with exactly that status, those
// header names and values in that order and those body bytes (node adds Date, Connection and
// Keep-Alive as it does for any response, as it does for the service's).
import fs from 'node:fs';
import http from 'node:http';

let status = 200;
let headers;
let body;
if (process.argv[2] === '--response') {
  const response = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  status = response.status;
  headers = response.headers.flat();
  body = Buffer.from(response.bodyBase64, 'base64');
} else {
  const size = Number(process.argv[2] ?? 1000);
  const filler = 'x'.repeat(Math.max(0, size - 12));
  body = Buffer.from(JSON.stringify({ data: filler }));
  headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
}
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(status, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
