import type { Readable } from "node:stream";

/**
 * PostgreSQL's binary COPY format, for moving a part's bytes to and from its `bytea` column as they
 * are. postgres.js sends every parameter and reads every column as text, and a `bytea` as text is
 * hex: twice the bytes on the wire, encoded and decoded on both sides. COPY … (FORMAT binary)
 * carries them raw (https://www.postgresql.org/docs/current/sql-copy.html, "Binary Format").
 */

/** "PGCOPY\n\377\r\n\0", then the flags field and the header extension length, both zero. */
const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
const HEADER = Buffer.concat([SIGNATURE, Buffer.alloc(8)]);
/** A tuple's field count of -1 ends the data. */
const TRAILER = Buffer.from([0xff, 0xff]);

/** One row of a COPY FROM STDIN: each field in its binary send format, or null. */
export type BinaryField = Buffer | null;

export const binaryInt2 = (value: number): Buffer => {
  const buffer = Buffer.allocUnsafe(2);
  buffer.writeInt16BE(value);
  return buffer;
};
export const binaryInt4 = (value: number): Buffer => {
  const buffer = Buffer.allocUnsafe(4);
  buffer.writeInt32BE(value);
  return buffer;
};
export const binaryInt8 = (value: number): Buffer => {
  const buffer = Buffer.allocUnsafe(8);
  buffer.writeBigInt64BE(BigInt(value));
  return buffer;
};
export const binaryBool = (value: boolean): Buffer => Buffer.from([value ? 1 : 0]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const binaryUuid = (value: string): Buffer => {
  if (!UUID.test(value)) throw new Error(`not a uuid: ${value}`);
  return Buffer.from(value.replaceAll("-", ""), "hex");
};

/**
 * The whole input of a COPY … FROM STDIN (FORMAT binary) of these rows, as one buffer: a row's
 * largest field (a part's bytes) is copied once, into place.
 */
export function encodeBinaryCopy(rows: readonly (readonly BinaryField[])[]): Buffer {
  let size = HEADER.length + TRAILER.length;
  for (const row of rows) {
    size += 2;
    for (const field of row) size += 4 + (field?.length ?? 0);
  }
  const out = Buffer.allocUnsafe(size);
  let at = HEADER.copy(out, 0);
  for (const row of rows) {
    at = out.writeInt16BE(row.length, at);
    for (const field of row) {
      if (field === null) {
        at = out.writeInt32BE(-1, at);
        continue;
      }
      at = out.writeInt32BE(field.length, at);
      at += field.copy(out, at);
    }
  }
  TRAILER.copy(out, at);
  return out;
}

/**
 * The output of a COPY (SELECT <one bytea column> …) TO STDOUT (FORMAT binary) as the column's
 * bytes, one value after the other: the framing (header, per-row field count, lengths, trailer) is
 * taken out as the data streams by, whatever the boundaries of the chunks it comes in. A value is
 * passed on in the slices it arrived in, never gathered whole; empty values and nulls give nothing.
 * An input that ends before its trailer, or that is not one column of binary COPY, is an error.
 */
export class BinaryCopyColumnReader {
  /** Bytes of a fixed-size piece (header, field count, length) split across chunks. */
  private pending: Buffer = Buffer.alloc(0);
  private state: "header" | "extension" | "count" | "length" | "value" | "done" = "header";
  /** Bytes left of the header extension or of the current value. */
  private remaining = 0;
  /** Rows read so far. */
  rows = 0;

  /** True once the trailer was read: the data is complete. */
  get done(): boolean {
    return this.state === "done";
  }

  /** Feeds a chunk; returns the value bytes in it, in order (slices of the chunk, not copies). */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.state === "done") throw new Error("binary COPY data after its trailer");
      if (this.state === "value") {
        const take = Math.min(this.remaining, chunk.length - at);
        out.push(chunk.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = "count";
        continue;
      }
      if (this.state === "extension") {
        const skip = Math.min(this.remaining, chunk.length - at);
        at += skip;
        this.remaining -= skip;
        if (this.remaining === 0) this.state = "count";
        continue;
      }
      const need = this.state === "header" ? HEADER.length : this.state === "count" ? 2 : 4;
      let piece: Buffer;
      if (this.pending.length === 0 && chunk.length - at >= need) {
        piece = chunk.subarray(at, at + need);
        at += need;
      } else {
        const take = Math.min(need - this.pending.length, chunk.length - at);
        this.pending = Buffer.concat([this.pending, chunk.subarray(at, at + take)]);
        at += take;
        if (this.pending.length < need) break;
        piece = this.pending;
        this.pending = Buffer.alloc(0);
      }
      this.take(piece);
    }
    return out;
  }

  /** Throws unless the data ended with its trailer. */
  end(): void {
    if (this.state !== "done") throw new Error("binary COPY data ended before its trailer");
  }

  private take(piece: Buffer): void {
    switch (this.state) {
      case "header": {
        if (!piece.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error("not binary COPY data");
        this.remaining = piece.readUInt32BE(SIGNATURE.length + 4);
        this.state = this.remaining > 0 ? "extension" : "count";
        return;
      }
      case "count": {
        const fields = piece.readInt16BE(0);
        if (fields === -1) this.state = "done";
        else if (fields === 1) {
          this.state = "length";
          this.rows++;
        } else throw new Error(`binary COPY row of ${fields} fields where one column was selected`);
        return;
      }
      case "length": {
        const length = piece.readInt32BE(0);
        // a null value (-1) or an empty one has no bytes
        this.remaining = Math.max(length, 0);
        this.state = this.remaining > 0 ? "value" : "count";
        return;
      }
      default:
        throw new Error(`binary COPY reader in state ${this.state}`);
    }
  }
}

/** What a COPY TO STDOUT needs from postgres.js: its stream once the server starts sending. */
export interface CopyOutQuery {
  readable(): Promise<Readable>;
}

/**
 * Reads a one-column binary COPY TO STDOUT to its end: the values' bytes (slices of the messages
 * as they came, not copies) and the number of rows. Read whole, and at the server's pace, so the
 * connection is back in the pool as soon as the server is done, whatever the pace of the bytes'
 * consumer.
 */
export async function copyOutColumn(query: CopyOutQuery): Promise<{ rows: number; values: Buffer[] }> {
  const reader = new BinaryCopyColumnReader();
  const values: Buffer[] = [];
  const stream = await query.readable();
  // Flowing, never paused. Data that is no binary COPY is refused once the COPY is over: the
  // transaction around it can end only then.
  let refused: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => {
      if (refused) return;
      try {
        for (const value of reader.push(chunk)) values.push(value);
      } catch (error) {
        refused = error as Error;
      }
    });
    stream.once("end", resolve);
    stream.once("error", reject);
  });
  if (refused) throw refused;
  reader.end();
  return { rows: reader.rows, values };
}
