/**
 * How service accounts authenticate: `X-API-Key: sf_…` instead of `Authorization: Bearer <jwt>`,
 * on management routes only. Sending both is a 400 (RFC 6750 §3.1 asks for one credential per
 * request, as `invalid_request`). `X-Instance-ID`, which the CASE reference also wants from
 * service users, is accepted and ignored: studyflow serves one instance.
 */
export const API_KEY_HEADER = "X-API-Key";
