import type { Params, Result, Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { TrieRouter } from "hono/router/trie-router";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PartitionedRouter } from "../src/routes/partitioned-router";
import { createTestApp, type TestApp } from "./test-app";

/** A router's answer as the handlers' numbers with their parameters, whichever form it came in. */
function answer(result: Result<number>): [number, Params][] {
  const [matched, stash] = result;
  return matched.map(([handler, params]): [number, Params] => {
    if (!stash) return [handler, { ...(params as Params) }];
    const values: Params = {};
    for (const [name, index] of Object.entries(params as Record<string, number>)) values[name] = stash[index]!;
    return [handler, values];
  });
}

const sorted = (answer: [number, Params][]) =>
  answer.map(([handler, params]) => [handler, Object.entries(params).sort(([a], [b]) => a.localeCompare(b))]);

function filled<R extends Router<number>>(router: R, routes: readonly (readonly [string, string])[]): R {
  routes.forEach(([method, path], index) => router.add(method, path, index));
  return router;
}

/**
 * Request paths for a route set: each path with a value for its parameters and wildcards, and
 * with each parameter in turn replaced by every fixed segment found at that depth in any route
 * (a participant called "virtual"); each of these also with and without a trailing slash, with
 * one more segment and with a doubled slash.
 */
function requestPaths(paths: readonly string[]): string[] {
  const segmentsOf = (path: string) => path.split("/").slice(1);
  // the fixed segments that follow each prefix of a route's path (its route siblings)
  const fixedAfter = new Map<string, Set<string>>();
  for (const path of paths) {
    const segments = segmentsOf(path);
    segments.forEach((segment, depth) => {
      if (segment.startsWith(":") || segment === "*") return;
      const prefix = segments.slice(0, depth).join("/");
      fixedAfter.set(prefix, (fixedAfter.get(prefix) ?? new Set()).add(segment));
    });
  }
  const concrete = new Set<string>(["/"]);
  const fill = (segments: string[]) => "/" + segments.join("/");
  for (const path of new Set(paths)) {
    const pattern = segmentsOf(path);
    const segments = pattern.map((segment) =>
      segment === "*" ? "any/thing" : segment.startsWith(":") ? (segment.includes("{.{0}}") ? "" : "v1x") : segment,
    );
    concrete.add(fill(segments));
    pattern.forEach((segment, depth) => {
      if (!segment.startsWith(":")) return;
      for (const fixed of fixedAfter.get(pattern.slice(0, depth).join("/")) ?? []) {
        concrete.add(fill(segments.map((s, d) => (d === depth ? fixed : s))));
      }
    });
  }
  const variants = new Set<string>();
  for (const path of concrete) {
    variants.add(path);
    variants.add(path.endsWith("/") ? path.slice(0, -1) || "/" : `${path}/`);
    variants.add(`${path}/more`);
    variants.add(path.replace(/\/([^/]*)$/, "//$1"));
  }
  return [...variants];
}

describe("PartitionedRouter", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers every request as a TrieRouter over all of the app's routes does", () => {
    const routes = t.app.routes.map((route) => [route.method, route.path] as const);
    const partitioned = filled(new PartitionedRouter<number>(), routes);
    const trie = filled(new TrieRouter<number>(), routes);
    const paths = requestPaths(routes.map(([, path]) => path));
    expect(paths.length).toBeGreaterThan(1000);
    const differences: string[] = [];
    const reached = new Set<number>();
    for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      for (const path of paths) {
        const expected = answer(trie.match(method, path));
        const actual = answer(partitioned.match(method, path));
        for (const [index] of expected) reached.add(index);
        // the same parameters in another order are the same answer
        if (JSON.stringify(sorted(actual)) !== JSON.stringify(sorted(expected))) {
          differences.push(`${method} ${path}`);
          expect(actual, `${method} ${path}`).toEqual(expected);
        }
      }
    }
    expect(differences).toEqual([]);
    // every route was reached by some request, not only the middleware that every path passes
    expect(routes.filter((_, index) => !reached.has(index))).toEqual([]);
  });

  it("serves the app's routes with RegExpRouters only", () => {
    const routes = t.app.routes.map((route) => [route.method, route.path] as const);
    const partitioned = filled(new PartitionedRouter<number>(), routes);
    expect(partitioned.routers.length).toBeGreaterThan(1);
    expect(partitioned.routers.every((router) => router instanceof RegExpRouter)).toBe(true);
  });

  it("keeps the order routes were added in when they fall to different routers", () => {
    const routes = [
      ["ALL", "/*"],
      ["GET", "/s/:id/items"],
      ["GET", "/s/list"],
      ["ALL", "/s/*"],
      ["GET", "/s/:id"],
      ["GET", "/s/:id/:trailingSlash{.{0}}"],
      // a pattern that matches the empty string: no RegExpRouter takes it
      ["GET", "/s/:id/:n{[0-9]*}"],
    ] as const;
    const partitioned = filled(new PartitionedRouter<number>(), routes);
    const trie = filled(new TrieRouter<number>(), routes);
    for (const path of ["/s/list", "/s/list/items", "/s/7/items", "/s/7", "/s/7/", "/s/7/12", "/s/list/", "/t"]) {
      expect(answer(partitioned.match("GET", path)), path).toEqual(answer(trie.match("GET", path)));
    }
    expect(answer(partitioned.match("GET", "/s/list"))).toEqual([
      [0, {}],
      [2, {}],
      [3, {}],
      [4, { id: "list" }],
    ]);
    expect(answer(partitioned.match("GET", "/s/7/"))).toEqual([
      [0, {}],
      [3, {}],
      [5, { id: "7", trailingSlash: "" }],
      [6, { id: "7", n: "" }],
    ]);
    expect(partitioned.routers.map((router) => router.name)).toEqual(["RegExpRouter", "RegExpRouter", "TrieRouter"]);
  });
});
