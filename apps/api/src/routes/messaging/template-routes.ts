import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Executor, MessagingResourceKey } from "@studyflow/db";
import type { CaseEmailTemplate, CaseSmsTemplate } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, messageSchema, studyKeyParam } from "../schemas";
import {
  assertMessaging,
  messageTypeParam,
  studyMessageTypeParams,
  type emailTemplateSchema,
  type smsTemplateSchema,
} from "./schemas";

/** One operation's documentation where a family's differs from the others'. */
interface OperationText {
  summary: string;
  description: string;
}

/** A template as case-backend answers it, of any family. */
type CaseTemplate = CaseEmailTemplate | CaseSmsTemplate;

/**
 * One family of case-backend's message templates (global e-mail, a study's e-mail, SMS): where
 * it lives, who may touch it, its schemas and domain functions. `scope` is the study's key for a
 * family kept per study (its collection path holds `{studyKey}`), null for a global one.
 */
interface TemplateFamilySpec<Body extends z.ZodType> {
  /** The family's collection below /v1/messaging. */
  collection: string;
  perStudy: boolean;
  /** The messaging permission's resource key (action `*`, limited by `{studyKey}` for a family per study). */
  resource: MessagingResourceKey;
  /** "Requires permission …", closing every operation's description. */
  permission: string;
  body: Body;
  template: typeof emailTemplateSchema | typeof smsTemplateSchema;
  save: OperationText & {
    run: (db: Executor, scope: string | null, input: z.output<Body>, actor: string) => Promise<CaseTemplate>;
    /** The 404 and 409 an unknown id and a second template of a type answer. */
    notFound: string;
    conflict: string;
  };
  read: OperationText & {
    run: (db: Executor, scope: string | null, messageType: string) => Promise<CaseTemplate>;
    /** What a type without a template answers: 404 (its text) or an empty template (undefined). */
    notFound?: string;
    answer: string;
  };
  list?: OperationText & { run: (db: Executor, scope: string | null) => Promise<CaseTemplate[]>; answer: string };
  remove?: OperationText & {
    run: (db: Executor, scope: string | null, messageType: string, actor: string) => Promise<unknown>;
  };
}

/** A family as the routes take it: its body read as `unknown` (its own schema has checked it). */
type TemplateFamily = TemplateFamilySpec<z.ZodType>;

/**
 * A template family whose body schema and save function agree (type-checked here, once), for
 * registerTemplateRoutes.
 */
export function templateFamily<Body extends z.ZodType>(spec: TemplateFamilySpec<Body>): TemplateFamily {
  const save = spec.save.run;
  return {
    ...spec,
    // the route validated the body with spec.body before the handler passes it on
    save: { ...spec.save, run: (db, scope, input, actor) => save(db, scope, input as z.output<Body>, actor) },
  };
}

/**
 * Registers a template family's operations as case-backend serves them: list (GET collection),
 * save (POST collection), read and delete (GET/DELETE collection/{messageType}), each behind the
 * family's messaging permission, the optional ones only where the family has them.
 */
export function registerTemplateRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps, family: TemplateFamily) {
  const db = deps.database.db;
  const { collection, perStudy, resource, permission } = family;
  const item = `${collection}/{messageType}`;
  const collectionRequest = perStudy ? { request: { params: studyKeyParam } } : {};
  const itemRequest = { request: { params: perStudy ? studyMessageTypeParams : messageTypeParam } };
  // The params schemas have checked studyKey and messageType before a handler runs.
  const scopeOf = (params: Record<string, string | undefined>) => (perStudy ? (params.studyKey ?? "") : null);
  const messageTypeOf = (params: Record<string, string | undefined>) => params.messageType ?? "";
  const allowed = (who: Parameters<typeof assertMessaging>[1], scope: string | null) =>
    assertMessaging(db, who, resource, scope ?? undefined);
  const templateAnswer = z.object({ template: family.template });
  const scopeErrors = perStudy ? ([400] as const) : ([] as const);

  if (family.list) {
    const list = family.list;
    caseRoute(
      router,
      {
        method: "get",
        path: collection,
        tags: ["messaging"],
        summary: list.summary,
        description: `${list.description}${permission}`,
        security: MANAGEMENT_SECURITY,
        ...collectionRequest,
        responses: {
          200: jsonContent(z.object({ templates: z.array(family.template) }), list.answer),
          ...errorResponses([...scopeErrors, 401, 403]),
        },
      },
      async (c) => {
        const scope = scopeOf(c.req.param());
        await allowed(managementOf(c), scope);
        return c.json({ templates: await list.run(db, scope) }, 200);
      },
    );
  }

  caseRoute(
    router,
    {
      method: "post",
      path: collection,
      tags: ["messaging"],
      summary: family.save.summary,
      description: `${family.save.description}${permission}`,
      security: MANAGEMENT_SECURITY,
      ...collectionRequest,
      body: family.body,
      responses: {
        200: jsonContent(templateAnswer, "the saved template"),
        ...errorResponses([400, 401, 403, 404, 409], { 404: family.save.notFound, 409: family.save.conflict }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const scope = scopeOf(c.req.param());
      await allowed(who, scope);
      const template = await family.save.run(db, scope, c.req.valid("json"), who.subject);
      return c.json({ template }, 200);
    },
  );

  const read = family.read;
  caseRoute(
    router,
    {
      method: "get",
      path: item,
      tags: ["messaging"],
      summary: read.summary,
      description: `${read.description}${permission}`,
      security: MANAGEMENT_SECURITY,
      ...itemRequest,
      responses: {
        200: jsonContent(templateAnswer, read.answer),
        ...(read.notFound === undefined
          ? errorResponses([400, 401, 403])
          : errorResponses([400, 401, 403, 404], { 404: read.notFound })),
      },
    },
    async (c) => {
      const params = c.req.param();
      const scope = scopeOf(params);
      await allowed(managementOf(c), scope);
      return c.json({ template: await read.run(db, scope, messageTypeOf(params)) }, 200);
    },
  );

  if (family.remove) {
    const remove = family.remove;
    caseRoute(
      router,
      {
        method: "delete",
        path: item,
        tags: ["messaging"],
        summary: remove.summary,
        description: `${remove.description}${permission}`,
        security: MANAGEMENT_SECURITY,
        ...itemRequest,
        responses: {
          200: jsonContent(messageSchema, '`{"message": "template deleted"}`'),
          ...errorResponses([400, 401, 403]),
        },
      },
      async (c) => {
        const who = managementOf(c);
        const params = c.req.param();
        const scope = scopeOf(params);
        await allowed(who, scope);
        await remove.run(db, scope, messageTypeOf(params), who.subject);
        return c.json({ message: "template deleted" }, 200);
      },
    );
  }
}
