// Reads the submitted survey response. `itemKey` matches top-level items only; `path` starts with
// the item's root response key and descends into `items` by key ("rg.mcg").
import { fail } from "../eval-context";
import { BATCH_CONSTANT, NO_PARTICIPANT_FIELDS, expressionFamily, strArg } from "../function-spec";
import { parseGoFloat } from "../go-compatible-format";
import { childKeys, findResponseValueNode } from "../response-lookup";

const CAST = "could not cast arguments";
const NOT_FOUND = "item not found";

const itemArgs = (cast: string) => [strArg("itemKey", cast), strArg("path", cast)];

export const responseExpressions = expressionFamily("response", [
  {
    name: "responseHasKeysAny",
    summary: "any listed key is a direct child of the node at path; a missing item or node is false",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs(CAST),
    rest: (i) => strArg(`key${i - 1}`, CAST),
    minArgs: 3,
    evaluate: (ctx, [itemKey, path, ...keys]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return false;
      const present = childKeys(node);
      return keys.some((k) => present.includes(k as string));
    },
  },
  {
    name: "responseHasOnlyKeysOtherThan",
    summary: "the node at path has children and none of them is a listed key (all keys are checked)",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs(CAST),
    rest: (i) => strArg(`key${i - 1}`, CAST),
    minArgs: 3,
    evaluate: (ctx, [itemKey, path, ...keys]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return false;
      const present = childKeys(node);
      if (present.length === 0) return false;
      return !keys.some((k) => present.includes(k as string));
    },
  },
  {
    name: "getResponseValueAsNum",
    summary: 'the node\'s value parsed as a number; error "item not found" or a parse error',
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs(CAST),
    evaluate: (ctx, [itemKey, path]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return fail(ctx, NOT_FOUND);
      const parsed = parseGoFloat(typeof node.value === "string" ? node.value : "");
      return parsed.ok ? parsed.value : fail(ctx, parsed.error);
    },
  },
  {
    name: "getResponseValueAsStr",
    summary: 'the node\'s value; error "item not found"',
    returns: "str",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs(CAST),
    evaluate: (ctx, [itemKey, path]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return fail(ctx, NOT_FOUND);
      return typeof node.value === "string" ? node.value : "";
    },
  },
  {
    name: "getSelectedKeys",
    summary: 'the node\'s child keys joined with ";"; error "item not found"',
    returns: "str",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs(CAST),
    evaluate: (ctx, [itemKey, path]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return fail(ctx, NOT_FOUND);
      return childKeys(node).join(";");
    },
  },
  {
    name: "countResponseItems",
    summary: 'number of the node\'s children; -1 with error "item not found"',
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs("could not cast argument"),
    evaluate: (ctx, [itemKey, path]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      if (!node) return fail(ctx, NOT_FOUND, -1);
      return childKeys(node).length;
    },
  },
  {
    name: "hasResponseKey",
    summary: "the node at path exists",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: itemArgs("could not cast argument"),
    evaluate: (ctx, [itemKey, path]) =>
      findResponseValueNode(ctx.event.response, itemKey as string, path as string) !== undefined,
  },
  {
    name: "hasResponseKeyWithValue",
    summary: "the node at path exists and its value equals the argument",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [...itemArgs("could not cast argument"), strArg("value")],
    evaluate: (ctx, [itemKey, path, value]) => {
      const node = findResponseValueNode(ctx.event.response, itemKey as string, path as string);
      return node !== undefined && (typeof node.value === "string" ? node.value : "") === value;
    },
  },
]);
