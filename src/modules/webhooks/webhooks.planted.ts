export const planted = (db: { selectFrom(t: string): unknown }) => db.selectFrom('webhook_deliveries');
