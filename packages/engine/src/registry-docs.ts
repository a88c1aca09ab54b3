// Renders the registry as Markdown for the package README, so the documented signatures are the
// ones the validator enforces.
import type { ArgSpec, FunctionSpec, ParticipantFieldUsage, ValueType } from "./function-spec";
import { actionSpecs, expressionSpecs } from "./registry";

const TYPE_LABELS: Record<ValueType, string> = { str: "str", num: "num", bool: "bool", any: "any" };

function argLabel(arg: ArgSpec): string {
  let type: string = TYPE_LABELS[arg.type];
  if (arg.role === "action") type = "action";
  else if (arg.role === "condition") type = "condition";
  else if (arg.expressionOnly) type = "exp";
  else if (arg.literalOnly) type = "literal str";
  if (arg.oneOf) type = arg.oneOf.map((v) => `"${v}"`).join(" \\| ");
  return `${arg.name}${arg.optional ? "?" : ""}: ${type}`;
}

function signature(spec: FunctionSpec): string {
  const parts = spec.args.map(argLabel);
  if (spec.rest) {
    const sample = spec.rest(spec.args.length);
    parts.push(`...${sample.name.replace(/\d+$/, "")}: ${argLabel(sample).split(": ")[1] ?? "any"}`);
  }
  return `${spec.name}(${parts.join(", ")})`;
}

function fieldsLabel({ reads, writes }: ParticipantFieldUsage): string {
  const list = (fields: ParticipantFieldUsage["reads"]) =>
    fields === "all" ? ["the whole state"] : fields.length > 0 ? [fields.join(", ")] : [];
  const parts = [...list(reads).map((l) => `reads ${l}`), ...list(writes).map((l) => `writes ${l}`)];
  return parts.length > 0 ? parts.join("; ") : "—";
}

/** How the bulk prefilter treats the function (see "Bulk prefilter" above the tables). */
function prefilterLabel(spec: FunctionSpec): string {
  const kind = spec.prefilter?.kind;
  if (spec.kind === "action" && spec.bulkWrite) return "runs; SQL write";
  if (kind === undefined) return spec.kind === "expression" ? "opaque" : "runs";
  const labels: Record<typeof kind, string> = {
    "batch-constant": "constant",
    "study-data": "study data",
    participant: "SQL",
    comparison: "compared",
    logic: "combined",
    if: "followed",
    ifthen: "followed",
    do: "followed",
  };
  return labels[kind];
}

function row(spec: FunctionSpec): string {
  const returns = spec.kind === "expression" ? ` → ${TYPE_LABELS[spec.returns]}` : "";
  const port = spec.usesServices ? " (port)" : "";
  const fields = fieldsLabel(spec.participantFields);
  return `| ${spec.family} | \`${signature(spec)}\`${returns}${port} | ${fields} | ${prefilterLabel(spec)} | ${spec.summary.replaceAll("|", "\\|")} |`;
}

/** Markdown tables of every expression and action: family, signature, participant fields, prefilter, meaning. */
export function describeRegistry(): string {
  return [
    `### Expressions (${expressionSpecs.length})`,
    "",
    "| family | signature | participant fields | bulk prefilter | meaning |",
    "|---|---|---|---|---|",
    ...expressionSpecs.map(row),
    "",
    `### Actions (${actionSpecs.length})`,
    "",
    "| family | signature | participant fields | bulk prefilter | meaning |",
    "|---|---|---|---|---|",
    ...actionSpecs.map(row),
  ].join("\n");
}
