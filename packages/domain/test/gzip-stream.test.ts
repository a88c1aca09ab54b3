// gzip files written in parts and read as one gzip member: the parts' CRCs combine into the
// file's, and the member a reader sends is what a client decoding Content-Encoding: gzip reads
// whole, however the parts were cut.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { crc32, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { gunzipOneMember } from "@studyflow/testkit";
import { crc32Combine, deflatePart, gzipStream, gzipStreamSize } from "../src/files/gzip-stream";

async function member(parts: Buffer[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of gzipStream(Readable.from(parts))) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe("gzip files in parts", () => {
  it("combines two CRC-32s into the CRC-32 of the bytes back to back", () => {
    for (const [a, b] of [
      [0, 0],
      [0, 1],
      [1, 0],
      [7, 1],
      [1000, 3],
      [65_536, 100_003],
    ] as const) {
      const first = randomBytes(a);
      const second = randomBytes(b);
      expect(crc32Combine(crc32(first), crc32(second), b)).toBe(crc32(Buffer.concat([first, second])));
    }
  });

  it("reads parts, empty ones and large ones among them, as one gzip member of their bytes, sized ahead", async () => {
    const texts = [
      Buffer.from("ID,participantID,weekly.Q1\n"),
      Buffer.alloc(0),
      Buffer.from("r1,p1,1\n".repeat(40_000)),
      randomBytes(100_000),
      Buffer.from("ü,é,😷\n"),
    ];
    const stored = texts.map(deflatePart);
    const bytes = await member(stored);
    expect(bytes.length).toBe(
      gzipStreamSize(
        stored.reduce((sum, part) => sum + part.length, 0),
        stored.length,
      ),
    );
    expect(gunzipOneMember(bytes).equals(Buffer.concat(texts))).toBe(true);
    expect(gunzipSync(bytes).equals(Buffer.concat(texts))).toBe(true);
  });

  it("reads no parts as the empty file", async () => {
    const bytes = await member([]);
    expect(bytes.length).toBe(gzipStreamSize(0, 0));
    expect(gunzipOneMember(bytes).length).toBe(0);
  });

  it("refuses a stored part shorter than its trailer rather than send a broken file", async () => {
    await expect(member([deflatePart(Buffer.from("a")), Buffer.from([1, 2, 3])])).rejects.toThrow(
      /shorter than its trailer/,
    );
  });
});
