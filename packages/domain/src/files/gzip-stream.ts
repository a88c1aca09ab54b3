import { constants, crc32, deflateRawSync } from "node:zlib";

/**
 * A gzip file written in parts, read as one gzip member (RFC 1952).
 *
 * Export parts are written independently, by several workers, and a retry replaces a part. Each
 * part used to be a gzip member of its own. Their concatenation is a valid .gz file, but HTTP
 * clients that decode `Content-Encoding: gzip` stop after the first member: Chromium and curl
 * deliver that member's rows and drop the rest without an error.
 *
 * So a part is stored as raw DEFLATE data ending on a sync flush (no final block, byte-aligned),
 * followed by an 8-byte part trailer: the CRC-32 and the length of its uncompressed bytes. Parts
 * of that shape concatenate into one DEFLATE stream. A reader sends the gzip header, every part
 * without its trailer, an empty final block, and the gzip trailer: the CRC-32 of the whole file,
 * combined from the parts' CRCs, and its length modulo 2^32.
 */

/** Magic, CM = deflate, no flags, no modification time, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
/** BFINAL = 1, fixed Huffman codes, end of block: the DEFLATE stream's last block, empty. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/** A stored part's own trailer: CRC-32 and length of its uncompressed bytes, little-endian. */
const PART_TRAILER_BYTES = 8;
const GZIP_TRAILER_BYTES = 8;
/** A part's uncompressed length must fit its trailer's 32 bits. */
const MAX_PART_BYTES = 0xffff_ffff;

/**
 * zlib's fastest level. On 100,000 responses (export bench, 2026-11-30) level 1 against the default
 * 6: long 19.7 against 17.7 MB, wide 7.7 against 6.6 MB, for 1.4 fewer CPU seconds of the workers
 * on long (4.0 against 5.4 s) and 0.4 on wide. The compression is for the transfer and the disk;
 * the workers' CPU is what an export waits for.
 */
const GZIP_LEVEL = constants.Z_BEST_SPEED;

/** A part of a gzip file, as stored: its raw DEFLATE data and its trailer. */
export function deflatePart(bytes: Buffer): Buffer {
  if (bytes.length > MAX_PART_BYTES) throw new RangeError(`a gzip part holds at most ${MAX_PART_BYTES} bytes`);
  const deflated = deflateRawSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH, level: GZIP_LEVEL });
  const part = Buffer.allocUnsafe(deflated.length + PART_TRAILER_BYTES);
  deflated.copy(part, 0);
  part.writeUInt32LE(crc32(bytes), deflated.length);
  part.writeUInt32LE(bytes.length, deflated.length + 4);
  return part;
}

/** The size of the gzip stream read from `parts` stored parts of `storedBytes` bytes in all. */
export function gzipStreamSize(storedBytes: number, parts: number): number {
  return GZIP_HEADER.length + storedBytes - parts * PART_TRAILER_BYTES + FINAL_BLOCK.length + GZIP_TRAILER_BYTES;
}

/** The stored parts, in order, as the bytes of one gzip member. Each input chunk is one whole part. */
export async function* gzipStream(parts: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield GZIP_HEADER;
  let crc = 0;
  let length = 0;
  for await (const part of parts) {
    const end = part.length - PART_TRAILER_BYTES;
    if (end < 0) throw new Error("a stored gzip part is shorter than its trailer");
    const partLength = part.readUInt32LE(end + 4);
    crc = crc32Combine(crc, part.readUInt32LE(end), partLength);
    length = (length + partLength) % 0x1_0000_0000;
    yield part.subarray(0, end);
  }
  const trailer = Buffer.allocUnsafe(FINAL_BLOCK.length + GZIP_TRAILER_BYTES);
  FINAL_BLOCK.copy(trailer, 0);
  trailer.writeUInt32LE(crc, FINAL_BLOCK.length);
  trailer.writeUInt32LE(length, FINAL_BLOCK.length + 4);
  yield trailer;
}

/**
 * CRC-32 arithmetic, in the bit-reversed form the CRC uses: a 32-bit word holds a polynomial over
 * GF(2) of degree < 32, x^0 in the top bit, x^31 in the lowest. zlib has crc32_combine; node:zlib
 * does not expose it.
 */
const CRC32_POLYNOMIAL = 0xedb88320;
const X0 = 0x8000_0000;

/** a·b modulo the CRC polynomial. */
function multiplyModP(a: number, b: number): number {
  let product = 0;
  let term = b;
  // for each power x^i present in a (top bit first), add b·x^i
  for (let bit = X0; bit !== 0; bit >>>= 1) {
    if (a & bit) product ^= term;
    // term · x: one step of the CRC's shift register
    term = term & 1 ? (term >>> 1) ^ CRC32_POLYNOMIAL : term >>> 1;
  }
  return product >>> 0;
}

/** x^(8·bytes) modulo the CRC polynomial, by squaring. */
function shiftByBytes(bytes: number): number {
  let result = X0;
  let square = X0 >>> 8; // x^8: one byte
  for (let rest = bytes; rest > 0; rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) result = multiplyModP(result, square);
    square = multiplyModP(square, square);
  }
  return result;
}

/** The CRC-32 of A followed by B, from the CRC of A, the CRC of B and the length of B. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB === 0) return crcA >>> 0;
  return (multiplyModP(shiftByBytes(lengthB), crcA) ^ crcB) >>> 0;
}
