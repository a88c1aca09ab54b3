/** A strict reader of the CSV this package writes (RFC 4180 quoting, `\n` records), for assertions. */
export function readCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1) throw new Error("unterminated quote");
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    }
    const c = text[i];
    if (c === ",") {
      record.push(field);
      field = "";
      i++;
    } else if (c === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else if (c === undefined) {
      break;
    } else {
      field += c;
      i++;
    }
  }
  if (field !== "" || record.length > 0) throw new Error("last record has no line end");
  return records;
}

/** Records as objects keyed by the header (the first occurrence of a repeated name). */
export function rowsByHeader(records: string[][]): Record<string, string>[] {
  const [header, ...rows] = records;
  return rows.map((row) => {
    const out: Record<string, string> = {};
    header!.forEach((name, i) => {
      if (!(name in out)) out[name] = row[i]!;
    });
    return out;
  });
}
