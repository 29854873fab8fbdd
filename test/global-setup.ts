import pg from 'pg';

/** Extensions are per database, so they are installed once before the test files run in parallel. */
export default async function setup() {
  if (process.env.TEST_ENGINE !== 'postgres') return;
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_ENGINE=postgres needs TEST_DATABASE_URL');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('create extension if not exists pg_trgm with schema public');
  } catch (err) {
    // Another run created it at the same moment: that is all we wanted.
    if ((err as { code?: string }).code !== '23505') throw err;
  }
  await client.end();
}
