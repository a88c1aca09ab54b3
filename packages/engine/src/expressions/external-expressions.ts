// externalEventEval: asks an external service for a value.
import { expressionFamily, optional, strArg } from "../function-spec";
import { externalEventBody, externalRoute } from "../external-event";

export const externalExpressions = expressionFamily("external", [
  {
    name: "externalEventEval",
    summary:
      'posts the event to the service and returns the reply\'s "value"; with returnType "float" the value must be a number',
    returns: "any",
    returnsFor: (node) => (node.returnType === "float" ? "num" : "any"),
    usesServices: true,
    // the whole state is posted to the service
    participantFields: { reads: "all", writes: [] },
    args: [strArg("serviceName"), optional(strArg("route"))],
    evaluate: async (ctx, args) => {
      const reply = await ctx.services.callExternalService(
        args[0] as string,
        externalRoute(args[1]),
        externalEventBody(ctx),
      );
      // the compiler checks the value against returnType "float"
      return reply !== null && typeof reply === "object" && !Array.isArray(reply) && Object.hasOwn(reply, "value")
        ? (reply as Record<string, unknown>)["value"]
        : null;
    },
  },
]);
