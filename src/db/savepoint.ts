import { sql, type Kysely } from 'kysely';

/**
 * Runs `work` inside SAVEPOINT `name` on `db` (which must be in a transaction): released when it
 * succeeds, rolled back to (and released) when it throws, so the transaction can go on. If the
 * rollback itself fails, the transaction is gone: the caller gets a TransactionLostError.
 */
export async function withSavepoint<R, D>(db: Kysely<D>, name: string, work: () => Promise<R>): Promise<R> {
  const savepoint = sql.id(name);
  await sql`savepoint ${savepoint}`.execute(db);
  try {
    const value = await work();
    await sql`release savepoint ${savepoint}`.execute(db);
    return value;
  } catch (error) {
    try {
      await sql`rollback to savepoint ${savepoint}`.execute(db);
      await sql`release savepoint ${savepoint}`.execute(db);
    } catch (lost) {
      throw new TransactionLostError(lost, error);
    }
    throw error;
  }
}

/** The savepoint could not be rolled back: the transaction around it is gone (aborted by the engine). */
export class TransactionLostError extends Error {
  constructor(
    cause: unknown,
    /** What `work` threw before the transaction turned out to be lost. */
    readonly workError: unknown,
  ) {
    super(`the transaction was lost: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'TransactionLostError';
  }
}
