// The stack's own reference points (issue 13): Fastify 5 with an API-key hook and a response
// schema, reading through better-sqlite3 (WAL, synchronous=FULL) or through pg with named
// statements and a pool of 10 — and nothing else: no framework of ours, no Kysely, no tenant
// scope, no logging. Two routes, loaded exactly like the service's:
//   GET /v0/persons/:id   one row by primary key;
//   GET /v0/pages?limit=N the newest N of a tenant's 1,000 pages and their exact count in one
//                         statement, serialized with the service's own response schema
//                         (dist/modules/pages/pages.schemas.js), the rows already in the
//                         response's shape (camelCase aliases, JSON columns as stored JSON).
//   POST /beacon/:bytes   a beacon's JSON read and answered (204, or 201 with a body of that size),
//                         nothing checked or written: the collect endpoint beside Fastify alone;
//   GET /constant/:bytes  a constant HTML buffer of that size (no key, no database): the page
//                         cache's hit beside Fastify answering bytes it already has.
// so "× ceiling" of the service and of the stack alone can be read side by side.
//   node bench/reference.mjs sqlite FILE | postgres URL      (prints {"port":…} when listening)
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { PageList, pageSchemas } from '../dist/modules/pages/pages.schemas.js';

const [engine, where] = process.argv.slice(2);
const PERSONS = 10_000;
const TABLE = 'bench_reference_persons';
const KEY = 'ref_key';
const COLUMNS = ['id', 'name', 'email', 'domain', 'phone_number', 'slug', 'account_domain', 'created_at', 'updated_at'];
const PAGES = 1_000;
const PAGES_TABLE = 'bench_reference_pages';
const COUNTS_TABLE = 'bench_reference_page_counts';
const PAGE_TEXT_COLUMNS = [
  'id',
  'name',
  'title',
  'page_context',
  'page_type',
  'status',
  'brand_id',
  'header_action_id',
];
const PAGE_JSON_COLUMNS = ['actions', 'action_card_widgets', 'footer_links', 'scripts', 'metadata'];
const PAGE_TIME_COLUMNS = ['created_at', 'updated_at', 'archived_at', 'deleted_at'];
const camel = (name) => name.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const PAGE_SELECT = [
  ...[...PAGE_TEXT_COLUMNS, ...PAGE_JSON_COLUMNS, ...PAGE_TIME_COLUMNS].map(
    (c) => `${c} as "${c === 'id' ? 'pageId' : camel(c)}"`,
  ),
  'audiences_count as "audiencesCount"',
].join(', ');
const THEMES = ['Pricing', 'Onboarding', 'Renewal', 'Webinar', 'Security review', 'Expansion', 'Launch', 'Follow-up'];
const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'];

/** A page like the bench's own (bench/scenarios/pages.ts), stored in the response's shape. */
const pageRow = (i) => {
  const id = (prefix, n) => `${prefix}_${String(n).padStart(26, '0')}`;
  const actions = [
    {
      actionId: id('action', 2 * i),
      actionIndex: 0,
      purpose: 'Book a meeting',
      buttonTitle: 'Book',
      actionType: 'calendar',
      url: 'https://example.com/book',
    },
    {
      actionId: id('action', 2 * i + 1),
      actionIndex: 1,
      purpose: 'Read the case study',
      buttonTitle: 'Read',
      actionType: 'link',
      url: 'https://example.com/case',
    },
  ];
  const status = i % 10 === 0 ? 'archived' : i % 3 === 0 ? 'draft' : 'published';
  const at = new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
  return {
    id: id('page', i),
    name: `${THEMES[i % THEMES.length]} for Company ${i} #${i}`,
    title: `Hello Company ${i}`,
    page_context: 'Personalised page for the account team. '.repeat(4),
    page_type: PAGE_TYPES[i % PAGE_TYPES.length],
    status,
    brand_id: 'brand_bench',
    header_action_id: actions[0].actionId,
    actions: JSON.stringify(actions),
    action_card_widgets: '[]',
    footer_links: '[]',
    scripts: '[]',
    metadata: JSON.stringify({ title: 'Bench page', description: 'A page for the benchmark', keywords: ['bench'] }),
    created_at: at,
    updated_at: at,
    archived_at: status === 'archived' ? at : null,
    deleted_at: null,
    audiences_count: 0,
  };
};
const PAGE_COLUMNS = Object.keys(pageRow(0));

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

  db.exec(`drop table if exists ${PAGES_TABLE}; drop table if exists ${COUNTS_TABLE};
    create table ${PAGES_TABLE} (tenant_id text not null, ${PAGE_COLUMNS.map((c) => `${c} ${c === 'audiences_count' ? 'integer' : 'text'}`).join(', ')}, primary key (tenant_id, id));
    create index ${PAGES_TABLE}_visible on ${PAGES_TABLE} (tenant_id, id) where deleted_at is null;
    create table ${COUNTS_TABLE} (tenant_id text primary key, visible integer not null)`);
  const insertPage = db.prepare(
    `insert into ${PAGES_TABLE} (tenant_id, ${PAGE_COLUMNS.join(', ')}) values ('tenant_1', ${PAGE_COLUMNS.map((c) => `@${c}`).join(', ')})`,
  );
  db.transaction(() => {
    for (let i = 0; i < PAGES; i++) insertPage.run(pageRow(i));
    db.prepare(`insert into ${COUNTS_TABLE} values ('tenant_1', ?)`).run(PAGES);
  })();
  const newest = new Map();
  const listPages = (limit) => {
    let statement = newest.get(limit);
    if (statement === undefined) {
      statement = db.prepare(
        `select ${PAGE_SELECT}, (select visible from ${COUNTS_TABLE} where tenant_id = @tenant) as "totalCount"
         from ${PAGES_TABLE} where tenant_id = @tenant and deleted_at is null order by id desc limit ${limit}`,
      );
      newest.set(limit, statement);
    }
    const rows = statement.all({ tenant: 'tenant_1' });
    for (const row of rows) for (const c of PAGE_JSON_COLUMNS) row[camel(c)] = JSON.parse(row[camel(c)]);
    return rows;
  };
  return {
    read: async (id) => select.get('tenant_1', id),
    listPages: async (limit) => listPages(limit),
    close: async () => db.close(),
  };
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

  await pool.query(`drop table if exists ${PAGES_TABLE}; drop table if exists ${COUNTS_TABLE}`);
  await pool.query(
    `create table ${PAGES_TABLE} (tenant_id text not null, ${PAGE_COLUMNS.map((c) => `${c} ${c === 'audiences_count' ? 'integer' : PAGE_JSON_COLUMNS.includes(c) ? 'jsonb' : 'text'}`).join(', ')}, primary key (tenant_id, id))`,
  );
  await pool.query(`create index ${PAGES_TABLE}_visible on ${PAGES_TABLE} (tenant_id, id) where deleted_at is null`);
  await pool.query(`create table ${COUNTS_TABLE} (tenant_id text primary key, visible integer not null)`);
  for (let i = 0; i < PAGES; i++) {
    const row = pageRow(i);
    await pool.query(
      `insert into ${PAGES_TABLE} (tenant_id, ${PAGE_COLUMNS.join(', ')}) values ('tenant_1', ${PAGE_COLUMNS.map((_, k) => `$${k + 1}`).join(', ')})`,
      PAGE_COLUMNS.map((c) => row[c]),
    );
  }
  await pool.query(`insert into ${COUNTS_TABLE} values ('tenant_1', $1)`, [PAGES]);
  await pool.query(`analyze ${PAGES_TABLE}`);
  const listText = `select ${PAGE_SELECT}, (select visible from ${COUNTS_TABLE} where tenant_id = $1) as "totalCount"
    from ${PAGES_TABLE} where tenant_id = $1 and deleted_at is null order by id desc limit $2`;
  return {
    read: async (id) => (await pool.query({ name: 'reference_person', text, values: ['tenant_1', id] })).rows[0],
    listPages: async (limit) =>
      (await pool.query({ name: 'reference_pages', text: listText, values: ['tenant_1', limit] })).rows,
    close: async () => {
      await pool.query(
        `drop table if exists ${TABLE}; drop table if exists ${PAGES_TABLE}; drop table if exists ${COUNTS_TABLE}`,
      );
      await pool.end();
    },
  };
}

const reader = engine === 'postgres' ? await postgresReader(where) : await sqliteReader(where);
const app = Fastify({ logger: false });
app.addHook('onRequest', async (request, reply) => {
  if (request.routeOptions.config.open === true) return;
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
for (const schema of pageSchemas) app.addSchema(schema);
app.get(
  '/v0/pages',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      },
      response: { 200: PageList },
    },
  },
  async (request) => {
    const { limit } = request.query;
    // As the service does: the exact count tells whether there is more, so `limit` rows suffice.
    const rows = await reader.listPages(limit);
    const totalCount = Number(rows[0]?.totalCount ?? 0);
    const hasMore = totalCount > rows.length;
    return {
      hasMore,
      items: rows,
      // Unsigned: the stack alone has no cursor of its own to protect.
      nextCursor: hasMore ? Buffer.from(rows.at(-1).pageId).toString('base64url') : null,
      totalCount,
    };
  },
);
/** A route's `:bytes` parameter: an integer size within [minimum, maximum]. */
const bytesParam = (minimum, maximum) => ({
  type: 'object',
  properties: { bytes: { type: 'integer', minimum, maximum } },
  required: ['bytes'],
});
// GET /constant/:bytes — a constant HTML buffer of that size, no key, no database (issue 27): what
// Fastify itself costs for a response whose bytes are ready, beside the page cache's hit.
const constants = new Map();
app.get(
  '/constant/:bytes',
  {
    config: { open: true },
    schema: { params: bytesParam(1, 1_000_000) },
  },
  async (request, reply) => {
    const { bytes } = request.params;
    let body = constants.get(bytes);
    if (body === undefined) {
      body = Buffer.from(`<!doctype html><html><body>${'x'.repeat(Math.max(0, bytes - 40))}</body></html>`);
      constants.set(bytes, body);
    }
    return reply.header('content-type', 'text/html; charset=utf-8').send(body);
  },
);
// POST /beacon/:bytes — a page script's beacon, sent as text/plain like navigator.sendBeacon's:
// the JSON body read and parsed (at most 8 KiB, as the service's collect), nothing checked,
// nothing written; 204, or 201 with a constant JSON body of `bytes` (a visit start's answer).
// What Fastify itself costs for a beacon, beside the service's POST /_ap/collect (issue 27).
app.addContentTypeParser(
  'text/plain',
  { parseAs: 'string', bodyLimit: 8 * 1024 },
  app.getDefaultJsonParser('error', 'error'),
);
app.post(
  '/beacon/:bytes',
  {
    config: { open: true },
    schema: { params: bytesParam(0, 8192) },
  },
  async (request, reply) => {
    const { bytes } = request.params;
    if (bytes === 0) return reply.code(204).send();
    return reply.code(201).send({ s: 'x'.repeat(Math.max(0, bytes - 8)) });
  },
);
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port, key: KEY, persons: PERSONS })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await reader.close();
  process.exit(0);
});
