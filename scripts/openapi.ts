// Writes the OpenAPI document generated from the route schemas to docs/openapi.json.
// A test fails when the committed file drifts from the code.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-openapi-'));
const database = connectDatabase({ databaseUrl: null, sqliteFile: path.join(dir, 'db.sqlite') });
await migrateToLatest(database);
const app = await buildApp({ config: parseConfig({ DATA_DIR: dir }), database, logger: pino({ level: 'silent' }) });
await app.ready();
const doc = (await app.inject({ url: '/openapi.json' })).json();
fs.writeFileSync('docs/openapi.json', `${JSON.stringify(doc, null, 2)}\n`);
await app.close();
await database.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths`);
