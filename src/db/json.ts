/** JSON text for a JSON column: both engines take text (PostgreSQL casts it to jsonb on write). */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
