import { sql, type Expression, type SqlBool } from 'kysely';

export interface KeysetColumn {
  /** A column reference, e.g. `pages.id`. */
  ref: string;
  direction: 'asc' | 'desc';
}

/**
 * The rows strictly after `values` in the order given by `columns`: keyset pagination, which
 * never skips or repeats a row when others are inserted while a client walks the pages.
 * The last column must be unique (the id) so that the order is total.
 */
export function keysetAfter(columns: KeysetColumn[], values: readonly unknown[]): Expression<SqlBool> {
  const [first, ...rest] = columns;
  if (first === undefined) throw new Error('keysetAfter needs at least one column');
  const value = values[0];
  const column = sql.ref(first.ref);
  const beyond = first.direction === 'asc' ? sql<SqlBool>`${column} > ${value}` : sql<SqlBool>`${column} < ${value}`;
  if (rest.length === 0) return beyond;
  return sql<SqlBool>`(${beyond} or (${column} = ${value} and ${keysetAfter(rest, values.slice(1))}))`;
}
