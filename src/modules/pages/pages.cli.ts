import fs from 'node:fs/promises';
import { positional, requiredText, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { AppError } from '../../http/errors.js';
import { validatorCompiler } from '../../http/validation.js';
import { withIdempotency } from '../../idempotency/idempotency.js';
import { PageCreateBody } from './pages.schemas.js';
import type { PageCreateBody as PageCreateInput } from './pages.schemas.js';
import { archivePage, createPageFromApi, publishPage, restorePage } from './pages.service.js';

/** The API's own validator of the create body (the same Ajv settings as a request's body). */
const createBody = validatorCompiler()({
  schema: PageCreateBody,
  httpPart: 'body',
  method: 'POST',
  url: '/v0/pages',
}) as ((body: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

/** The body of `POST /v0/pages`, read from a JSON file and checked by the API's own schema. */
async function readCreateBody(file: string) {
  let body: unknown;
  try {
    body = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new AppError('bad_request', `${file} is not a readable JSON file: ${(err as Error).message}`);
  }
  if (createBody(body)) return body as PageCreateInput;
  const messages = (createBody.errors ?? [])
    .slice(0, 5)
    .map((e) => `/body${e.instancePath} ${e.message ?? 'is invalid'}`);
  throw new AppError('validation_failed', `${file} is not a valid page: ${messages.join('; ')}.`);
}

const onePage = (verb: 'publish' | 'archive' | 'restore', summary: string, run: typeof publishPage): CliCommand => ({
  path: ['page', verb],
  summary,
  options: { tenant: { type: 'string' } },
  positionals: 'PAGE_ID',
  run: async (ctx, { values, positionals }) => ({
    ...(await run(await tenantScope(ctx, values), ctx.clock, positional(positionals, 'PAGE_ID'))),
  }),
});

/** What `POST /v0/pages` and the page transitions do, from a terminal (docs/api.md, The life of a page). */
export const pagesCommands: CliCommand[] = [
  {
    path: ['page', 'create'],
    summary: 'Create a draft page from a JSON file holding the body of POST /v0/pages; prints the page',
    options: { tenant: { type: 'string' }, file: { type: 'string' } },
    run: async (ctx, { values }) => {
      const { idempotencyKey, ...input } = await readCreateBody(requiredText(values, 'file'));
      const scope = await tenantScope(ctx, values);
      const result = await withIdempotency(
        scope,
        ctx.clock,
        { operation: 'pages.create', key: idempotencyKey, body: input },
        async (tx) => ({ status: 201, body: await createPageFromApi(tx, ctx.clock, input) }),
      );
      return { ...result.body };
    },
  },
  onePage('publish', "Publish a draft page (its audiences' draft versions go live); prints the page", publishPage),
  onePage('archive', 'Archive a page (its links answer 410 until it is restored); prints the page', archivePage),
  onePage('restore', 'Restore an archived page to the status it was archived from; prints the page', restorePage),
];
