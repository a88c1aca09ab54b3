import type { ParamIndexMap, Params, Result, Router } from "hono/router";
import { UnsupportedPathError } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { TrieRouter } from "hono/router/trie-router";

/** A route as added: its method, its path and its number in the order routes were added. */
type Route = readonly [method: string, path: string, added: number];

/** A path's last segment that matches only an empty one (define-route.ts's slashed twin of a root). */
const EMPTY_LAST_SEGMENT = /\/:([^/{}]+)\{\.\{0\}\}$/;

/**
 * hono's RegExpRouter for routes it cannot hold all at once. It refuses a fixed segment beside a
 * parameter at the same place (`participants/virtual` beside `participants/:participantID/…`),
 * whichever came first, and a parameter whose pattern matches only the empty string
 * (`:trailingSlash{.{0}}`). Given such routes hono's SmartRouter serves all of them with its
 * TrieRouter, which walks every candidate branch of the path (bench/router-bench.ts).
 *
 * Here each route goes to the first of several RegExpRouters that takes it, a new one when none
 * does. A last segment that matches only the empty string is the path up to its slash, with that
 * parameter set to "" when it matches; any other route no RegExpRouter takes goes to one
 * TrieRouter. A request is matched in each of them and the handlers found are put back in the
 * order they were added, so the answer is the one a single TrieRouter over every route gives: the
 * same handlers in the same order, with the same parameters (test/partitioned-router.test.ts).
 */
export class PartitionedRouter<T> implements Router<T> {
  name = "PartitionedRouter";
  #handlers: T[] = [];
  #routes: Route[] | undefined = [];
  #routers: Router<number>[] = [];

  add(method: string, path: string, handler: T): void {
    if (!this.#routes) throw new Error("Can not add a route since the matcher is already built.");
    this.#routes.push([method, path, this.#handlers.length]);
    this.#handlers.push(handler);
  }

  match(method: string, path: string): Result<T> {
    const { routers, emptyParams } = partition(this.#routes ?? []);
    this.#routes = undefined;
    this.#routers = routers;
    const handlers = this.#handlers;
    const namesOf = new Map<ParamIndexMap, string[]>();
    const matchAll = (method: string, path: string): Result<T> => {
      const found: [T, Params][] = [];
      const order: number[] = [];
      let ordered = true;
      for (let r = 0; r < routers.length; r++) {
        const [matched, stash] = routers[r]!.match(method, path);
        for (let m = 0; m < matched.length; m++) {
          const added = matched[m]![0];
          let params: Params;
          if (stash) {
            // a RegExpRouter's answer: each parameter's index into its match of the path
            const indexes = matched[m]![1] as ParamIndexMap;
            let names = namesOf.get(indexes);
            if (!names) namesOf.set(indexes, (names = Object.keys(indexes)));
            params = {};
            for (let n = 0; n < names.length; n++) params[names[n]!] = stash[indexes[names[n]!]!]!;
          } else params = matched[m]![1] as Params;
          const empty = emptyParams[added];
          if (empty !== undefined) params[empty] = "";
          if (order.length > 0 && order[order.length - 1]! > added) ordered = false;
          order.push(added);
          found.push([handlers[added]!, params]);
        }
      }
      if (ordered) return [found];
      const positions = order.map((_, position) => position).sort((a, b) => order[a]! - order[b]!);
      return [positions.map((position) => found[position]!)];
    };
    this.match = matchAll;
    return matchAll(method, path);
  }

  /** The routers the routes went to (built on the first match). */
  get routers(): readonly Router<number>[] {
    if (this.#routes) this.match("GET", "/");
    return this.#routers;
  }
}

/** A RegExpRouter that can be asked to take a route: after a refusal it is built anew without it. */
class Candidate {
  router = new RegExpRouter<number>();
  #taken: Route[] = [];
  /** Methods and paths refused already: the same one is refused again, as the router only grows. */
  #refused = new Set<string>();

  take(route: Route): boolean {
    const key = `${route[0]} ${route[1]}`;
    if (this.#refused.has(key)) return false;
    try {
      this.router.add(...route);
      this.#taken.push(route);
      return true;
    } catch (error) {
      if (!(error instanceof UnsupportedPathError)) throw error;
      // a refusal can leave the router half changed (one method's table holding the path, not another's)
      this.#refused.add(key);
      this.router = new RegExpRouter<number>();
      for (const taken of this.#taken) this.router.add(...taken);
      return false;
    }
  }
}

function partition(routes: Route[]): { routers: Router<number>[]; emptyParams: (string | undefined)[] } {
  const candidates: Candidate[] = [];
  const trie = new TrieRouter<number>();
  let trieRoutes = 0;
  const emptyParams: (string | undefined)[] = [];
  const takenAlone = new Map<string, boolean>();
  for (const original of routes) {
    let route = original;
    const empty = EMPTY_LAST_SEGMENT.exec(route[1]);
    if (empty) {
      route = [route[0], route[1].slice(0, empty.index + 1), route[2]];
      emptyParams[route[2]] = empty[1];
    }
    const key = `${route[0]} ${route[1]}`;
    let alone = takenAlone.get(key);
    if (alone === undefined) takenAlone.set(key, (alone = new Candidate().take(route)));
    if (!alone) {
      trie.add(...original);
      emptyParams[route[2]] = undefined;
      trieRoutes++;
      continue;
    }
    if (candidates.some((candidate) => candidate.take(route))) continue;
    const candidate = new Candidate();
    candidate.take(route);
    candidates.push(candidate);
  }
  const routers: Router<number>[] = candidates.map((candidate) => candidate.router);
  if (trieRoutes > 0) routers.push(trie);
  return { routers, emptyParams };
}
