// The ceiling: a bare node:http server answering every request with a fixed JSON body of SIZE
// bytes. The service's numbers are quoted as ratios to this, measured in the same run.
import http from 'node:http';

const size = Number(process.argv[2] ?? 1000);
const filler = 'x'.repeat(Math.max(0, size - 12));
const body = Buffer.from(JSON.stringify({ data: filler }));
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
