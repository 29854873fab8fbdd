// The stack's own reference point (issue 13): Fastify 5 with an API-key hook and a response
// schema, reading one row by primary key — through better-sqlite3 (WAL, synchronous=FULL) or
// through pg with a named statement and a pool of 10 — and nothing else: no framework of ours,
// no Kysely, no tenant scope, no logging. The bench loads it exactly like the service's
// `GET /v0/persons/{id}`, so "× ceiling" of both can be read side by side.
//   node bench/reference.mjs sqlite FILE | postgres URL      (prints {"port":…} when listening)
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

const [engine, where] = process.argv.slice(2);
const PERSONS = 10_000;
const TABLE = 'bench_reference_persons';
const KEY = 'ref_key';
const COLUMNS = ['id', 'name', 'email', 'domain', 'phone_number', 'slug', 'account_domain', 'created_at', 'updated_at'];

const row = (i) => [
  `person_${String(i).padStart(26, '0')}`,
  `Person ${i}`,
  `person${i}@example.com`,
  'example.com',
  null,
  `person-${i}`,
  'example.com',
  '2026-11-01T00:00:00.000Z',
  '2026-11-01T00:00:00.000Z',
];

async function sqliteReader(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    `drop table if exists ${TABLE}; create table ${TABLE} (tenant_id text not null, ${COLUMNS.map((c) => `${c} text`).join(', ')}, primary key (tenant_id, id))`,
  );
  const insert = db.prepare(`insert into ${TABLE} values (?, ${COLUMNS.map(() => '?').join(', ')})`);
  db.transaction(() => {
    for (let i = 0; i < PERSONS; i++) insert.run('tenant_1', ...row(i));
  })();
  const select = db.prepare(`select ${COLUMNS.join(', ')} from ${TABLE} where tenant_id = ? and id = ?`);
  return { read: async (id) => select.get('tenant_1', id), close: async () => db.close() };
}

async function postgresReader(url) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(`drop table if exists ${TABLE}`);
  await pool.query(
    `create table ${TABLE} (tenant_id text not null, ${COLUMNS.map((c) => `${c} text`).join(', ')}, primary key (tenant_id, id))`,
  );
  for (let i = 0; i < PERSONS; i += 1000) {
    const values = [];
    const tuples = [];
    for (let j = i; j < i + 1000; j++) {
      const base = values.length;
      values.push('tenant_1', ...row(j));
      tuples.push(`(${Array.from({ length: COLUMNS.length + 1 }, (_, k) => `$${base + k + 1}`).join(', ')})`);
    }
    await pool.query(`insert into ${TABLE} values ${tuples.join(', ')}`, values);
  }
  const text = `select ${COLUMNS.join(', ')} from ${TABLE} where tenant_id = $1 and id = $2`;
  return {
    read: async (id) => (await pool.query({ name: 'reference_person', text, values: ['tenant_1', id] })).rows[0],
    close: async () => {
      await pool.query(`drop table if exists ${TABLE}`);
      await pool.end();
    },
  };
}

const reader = engine === 'postgres' ? await postgresReader(where) : await sqliteReader(where);
const app = Fastify({ logger: false });
app.addHook('onRequest', async (request, reply) => {
  if (request.headers['x-api-key'] !== KEY) return reply.code(401).send({ title: 'Unauthorized' });
});
const properties = Object.fromEntries(COLUMNS.map((c) => [c, { type: ['string', 'null'] }]));
app.get(
  '/v0/persons/:id',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', maxLength: 200 } }, required: ['id'] },
      response: { 200: { type: 'object', properties, required: COLUMNS } },
    },
  },
  async (request, reply) => {
    const found = await reader.read(request.params.id);
    if (found === undefined) return reply.code(404).send({ title: 'Not found' });
    return found;
  },
);
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port, key: KEY, persons: PERSONS })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await reader.close();
  process.exit(0);
});
