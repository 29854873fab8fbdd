#!/usr/bin/env node
// Watch webhook deliveries locally: prints every request it receives and, given the
// subscription's signing secret, whether its Standard Webhooks signature verifies.
//
//   node scripts/webhook-receiver.mjs [--port 4000] [--secret whsec_…] [--status 204]
//
// Subscribe it with url http://127.0.0.1:4000/ (needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true and WEBHOOK_ALLOWED_PORTS=4000 on the
// service: development only).
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4000' },
    secret: { type: 'string' },
    status: { type: 'string', default: '204' },
  },
});
const verifier = values.secret ? new Webhook(values.secret) : null;

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let signature = 'not checked (no --secret)';
      if (verifier) {
        try {
          verifier.verify(body, req.headers);
          signature = 'valid';
        } catch (err) {
          signature = `INVALID (${err.message})`;
        }
      }
      console.log(
        `${new Date().toISOString()} ${req.method} ${req.url} webhook-id=${req.headers['webhook-id']} signature ${signature}\n  ${body}`,
      );
      res.writeHead(Number(values.status)).end();
    });
  })
  .listen(Number(values.port), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${values.port}/`));
