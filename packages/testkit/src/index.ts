export { adminDatabaseUrl, adminClient, quoteIdent, testRedisUrl, databaseUrlFor } from "./env";
export { createTestDatabase, createEmptyDatabase, type TestDatabase } from "./database";
export { uniqueQueuePrefix, createTestRedis, deletePrefix } from "./redis";
export { str, num, exp, call, onEvent } from "./rule-builders";
export { STRONG_PASSWORD } from "./passwords";
export { startTcpProxy, type TcpProxy } from "./tcp-proxy";
export { freePort } from "./free-port";
export { machineTicks, processCpuMs, statCpuMs } from "./proc-cpu";
export { gunzipOneMember, readOpenedFile } from "./gzip-member";
