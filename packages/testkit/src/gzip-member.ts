import { crc32, inflateRawSync } from "node:zlib";

/**
 * The content of a .gz file that must be exactly one gzip member, as an HTTP client decoding
 * `Content-Encoding: gzip` reads it (Chromium and curl stop after the first member). Throws when
 * the bytes are anything else: another header, a second member after the first, or a trailer
 * whose CRC-32 or length does not match the content.
 */
export function gunzipOneMember(bytes: Buffer): Buffer {
  if (bytes.length < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b || bytes[2] !== 0x08) {
    throw new Error("not a gzip member");
  }
  if (bytes[3] !== 0) throw new Error(`gzip header flags ${bytes[3]}: expected none`);
  const body = bytes.subarray(10, bytes.length - 8);
  const { buffer, engine } = inflateRawSync(body, { info: true }) as unknown as {
    buffer: Buffer;
    engine: { bytesWritten: number };
  };
  if (engine.bytesWritten !== body.length) {
    throw new Error(`the DEFLATE data ends after ${engine.bytesWritten} of ${body.length} bytes: more than one member`);
  }
  const trailer = bytes.subarray(bytes.length - 8);
  if (trailer.readUInt32LE(0) !== crc32(buffer)) throw new Error("the gzip trailer's CRC-32 does not match");
  if (trailer.readUInt32LE(4) !== buffer.length % 0x1_0000_0000)
    throw new Error("the gzip trailer's length does not match");
  return buffer;
}

/**
 * The bytes of a file opened from the store (an export's), as its content: read to the end and,
 * when its body is gzip, checked to be one member and decompressed.
 */
export async function readOpenedFile(file: {
  contentEncoding?: string;
  body: AsyncIterable<unknown>;
}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file.body) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  return file.contentEncoding === "gzip" ? gunzipOneMember(bytes) : bytes;
}
