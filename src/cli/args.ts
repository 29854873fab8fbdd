import { TenantScope } from '../db/tenant-scope.js';
import { AppError } from '../http/errors.js';
import type { CliContext } from './command.js';

/** Reading a command's parsed arguments, the same way in every command. */

type Values = Record<string, unknown>;

/** `--name value`, trimmed; undefined when absent or blank. */
export function optionalText(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `--name value`, which the command cannot do without. */
export function requiredText(values: Values, name: string): string {
  const value = optionalText(values, name);
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

/** The positional argument at `index`, named in the message when it is missing (e.g. KEY_ID). */
export function positional(positionals: string[], name: string, index = 0): string {
  const value = positionals[index];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** The scope of the tenant named by `--tenant`, which must exist. */
export async function tenantScope(ctx: CliContext, values: Values): Promise<TenantScope> {
  const tenantId = requiredText(values, 'tenant');
  const tenant = await ctx.db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
  if (tenant === undefined) throw new AppError('not_found', `No tenant with id "${tenantId}" exists.`);
  return TenantScope.of(ctx.database, tenantId);
}
