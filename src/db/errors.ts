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

/**
 * The database refused for the moment because another transaction holds what this one needs:
 * SQLite's busy timeout ran out (another process held the write lock longer), or PostgreSQL gave
 * up on a lock, a deadlock or a serialization conflict. Trying the same work again later is right.
 */
export function isContention(error: unknown): boolean {
  const code = (error as DriverError | null)?.code;
  if (code === undefined) return false;
  return code.startsWith('SQLITE_BUSY') || code === '40001' || code === '40P01' || code === '55P03';
}
