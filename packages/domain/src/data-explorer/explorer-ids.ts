const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of responses and reports are UUIDs; any other text names nothing (a 404, never a database error). */
export const isRowId = (id: string) => UUID.test(id);
