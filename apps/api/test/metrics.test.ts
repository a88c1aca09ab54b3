import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const TRACK_ACCOUNT = "/v1/studies/:studyKey/track-account";

/** The value of the one sample line that starts with `series` (name and labels, exactly). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics on the api", () => {
  let t: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    [t, other] = await Promise.all([createTestApp(), createTestApp()]);
    await setupStudy(t, { key: "study-a" });
  });
  afterAll(async () => {
    await Promise.all([t.close(), other.close()]);
  });

  it("counts requests by method, route template and status, and times them", async () => {
    const { token } = await researcher(t, "study-a", "update-study-props");
    expect((await t.app.request("/healthz")).status).toBe(200);
    expect((await t.app.request("/healthz")).status).toBe(200);
    expect((await postJson(t, "/v1/studies/study-a/track-account", { trackAccount: true }, token, "PUT")).status).toBe(
      200,
    );
    expect(
      (await postJson(t, "/v1/studies/study-b/track-account", { trackAccount: true }, undefined, "PUT")).status,
    ).toBe(401);
    expect((await t.app.request("/v1/nothing-here/42")).status).toBe(404);
    expect((await t.app.request("/healthz", { method: "DELETE" })).status).toBe(404);

    const res = await t.app.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();

    expect(text).toContain("# TYPE studyflow_http_requests_total counter");
    expect(sample(text, 'studyflow_http_requests_total{method="GET",route="/healthz",status="200"}')).toBe(2);
    expect(sample(text, `studyflow_http_requests_total{method="PUT",route="${TRACK_ACCOUNT}",status="200"}`)).toBe(1);
    // Stopped by the auth middleware, still counted under the route it was meant for.
    expect(sample(text, `studyflow_http_requests_total{method="PUT",route="${TRACK_ACCOUNT}",status="401"}`)).toBe(1);
    expect(sample(text, 'studyflow_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'studyflow_http_requests_total{method="DELETE",route="unmatched",status="404"}')).toBe(1);
    // Concrete paths never become labels.
    expect(text).not.toContain("study-a");
    expect(text).not.toContain("nothing-here");

    expect(text).toContain("# TYPE studyflow_http_request_duration_seconds histogram");
    expect(
      sample(
        text,
        'studyflow_http_request_duration_seconds_bucket{le="0.001",method="GET",route="/healthz",status="200"}',
      ),
    ).toBeDefined();
    expect(
      sample(text, 'studyflow_http_request_duration_seconds_bucket{le="5",method="GET",route="/healthz",status="200"}'),
    ).toBe(2);
    expect(
      sample(text, `studyflow_http_request_duration_seconds_count{method="PUT",route="${TRACK_ACCOUNT}",status="401"}`),
    ).toBe(1);
    expect(
      sample(text, 'studyflow_http_request_duration_seconds_sum{method="GET",route="/healthz",status="200"}'),
    ).toBeGreaterThan(0);
    // Default process metrics come along.
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
  });

  it("a scrape is itself counted under /metrics", async () => {
    await t.app.request("/metrics");
    const text = await (await t.app.request("/metrics")).text();
    expect(
      sample(text, 'studyflow_http_requests_total{method="GET",route="/metrics",status="200"}'),
    ).toBeGreaterThanOrEqual(2);
  });

  it("every app has a registry of its own", async () => {
    const text = await (await other.app.request("/metrics")).text();
    expect(sample(text, 'studyflow_http_requests_total{method="GET",route="/healthz",status="200"}')).toBeUndefined();
    expect(text).toContain("# TYPE studyflow_http_requests_total counter");
  });

  it("/metrics is not part of the OpenAPI document", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
  });
});
