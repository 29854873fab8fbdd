import { positional, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import * as erasures from './person-erasures.service.js';

/** `person erase|export`: the same rules as the API (docs/privacy.md). */
export const personErasureCommands: CliCommand[] = [
  {
    path: ['person', 'erase'],
    summary: 'Erase a person and everything that identifies them (idempotent)',
    options: { tenant: { type: 'string' } },
    positionals: 'PERSON_ID',
    run: async (ctx, { values, positionals }) =>
      erasures.erasePerson(await tenantScope(ctx, values), ctx.clock, positional(positionals, 'PERSON_ID')),
  },
  {
    path: ['person', 'export'],
    summary: 'Print everything stored about a person, as JSON',
    options: { tenant: { type: 'string' } },
    positionals: 'PERSON_ID',
    run: async (ctx, { values, positionals }) =>
      erasures.exportPerson(await tenantScope(ctx, values), ctx.clock, positional(positionals, 'PERSON_ID')),
  },
];
