/** Recognizes constraint violations of either driver, so services can map them to domain errors. */

interface DriverError {
  code?: string;
  constraint?: string;
  message?: string;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as DriverError | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as DriverError | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** Whether a unique violation concerns the named index/constraint (PostgreSQL) or columns (SQLite). */
export function violatedConstraint(error: unknown, pgConstraint: string, sqliteColumns: string): boolean {
  const e = error as DriverError | null;
  if (e?.code === '23505') return e.constraint === pgConstraint;
  return typeof e?.message === 'string' && e.message.includes(sqliteColumns);
}
