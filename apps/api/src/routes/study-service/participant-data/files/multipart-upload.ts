import busboy from "busboy";
import { DomainError, Invalid } from "@studyflow/domain/errors";

/**
 * What a participant's upload form may hold. The CASE participant app sends two parts, profileID
 * and file; a few more fields are tolerated (and ignored) so that a client adding one still works,
 * but no form may keep the parser busy with more.
 */
export const UPLOAD_FORM_LIMITS = {
  /** Text fields: profileID and a few a client may add. */
  fields: 8,
  /** Bytes of one text field: profileID is at most 200 characters (600 bytes of UTF-8). */
  fieldBytes: 1024,
  /** Parts of any kind, those without a form-data disposition (which busboy skips) included. */
  parts: 9,
} as const;

export interface MultipartUploadLimits {
  /** Largest file accepted: PARTICIPANT_FILE_MAX_BYTES. */
  fileBytes: number;
  /** Largest body accepted, framing included: the file's limit plus UPLOAD_FORM_OVERHEAD_BYTES. */
  bodyBytes: number;
  /** The answer to a file or body over its limit. */
  tooLargeMessage: string;
}

export interface MultipartUpload {
  /** The form's text fields by name (the first value of each; a repeated one is refused). */
  fields: ReadonlyMap<string, string>;
  /** The file part named `file`: its bytes in one buffer, or null when the form has none. */
  file: Buffer | null;
}

const malformed = (problem: string) => new Invalid(`form: the multipart body is malformed (${problem})`);

/**
 * Reads a participant's upload form from the request body as it arrives, with busboy: only the
 * file part's bytes are kept (at most `fileBytes`, joined into one buffer once at the end), the
 * text fields are bounded in number and size, and the body as a whole is counted. The first
 * thing over a limit ends the read at once, with what arrived so far, so that an oversized file or
 * a flood of parts takes no more from the socket than the limit and the chunk that crossed it:
 * a 413 (DomainError payload-too-large) for a file or body too large, a 400 (Invalid) for too
 * many parts, a second file, a field too long or a body that is no well-formed multipart form.
 *
 * The body stream is left unread, not cancelled, on a refusal: cancelling it would destroy the
 * connection before the answer is written; the server drains or closes it after answering.
 */
export async function readMultipartUpload(
  body: ReadableStream<Uint8Array> | null,
  contentType: string,
  limits: MultipartUploadLimits,
): Promise<MultipartUpload> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      limits: {
        // busboy signals a limit when a count reaches it, not when it passes it: a file of exactly
        // fileBytes would be reported truncated, and a form of exactly `parts` parts cut short.
        fileSize: limits.fileBytes + 1,
        files: 1,
        fields: UPLOAD_FORM_LIMITS.fields,
        fieldSize: UPLOAD_FORM_LIMITS.fieldBytes,
        parts: UPLOAD_FORM_LIMITS.parts + 1,
        // No headerPairs: busboy 1.x reads it nowhere; a part's header is bounded by busboy
        // itself (16 KiB, else "Malformed part header").
      },
    });
  } catch (error) {
    // No boundary, or a Content-Type busboy cannot parse.
    throw malformed((error as Error).message);
  }

  const fields = new Map<string, string>();
  const state = {
    /** The file part's chunks as busboy hands them over (views of what was read, not copies). */
    fileChunks: null as Buffer[] | null,
    fileBytes: 0,
    refusal: null as DomainError | null,
    finished: false,
    /** Wakes the reading loop: busboy drained, closed, or something was refused. */
    wake: null as (() => void) | null,
  };
  const notify = () => {
    const wake = state.wake;
    state.wake = null;
    wake?.();
  };
  const refuse = (error: DomainError) => {
    if (state.refusal) return;
    state.refusal = error;
    state.fileChunks = null;
    notify();
  };
  const tooLarge = () => refuse(new DomainError("payload-too-large", limits.tooLargeMessage));

  parser.on("file", (name, stream) => {
    if (name !== "file") {
      stream.resume();
      refuse(new Invalid(`form.${name}: is a file; the form takes one file, in the part named file`));
      return;
    }
    const chunks: Buffer[] = [];
    state.fileChunks = chunks;
    stream.on("data", (chunk: Buffer) => {
      if (state.refusal) return;
      chunks.push(chunk);
      state.fileBytes += chunk.length;
    });
    stream.on("limit", tooLarge);
    // a body cut short ends the file with an error; the parser reports the same as its own
    stream.on("error", () => undefined);
  });
  parser.on("field", (name, value, info) => {
    if (info.valueTruncated) {
      refuse(new Invalid(`form.${name}: is longer than ${UPLOAD_FORM_LIMITS.fieldBytes} bytes`));
    } else if (fields.has(name)) {
      refuse(new Invalid(`form.${name}: is given more than once`));
    } else {
      fields.set(name, value);
    }
  });
  parser.on("filesLimit", () =>
    refuse(new Invalid("form: holds more than one file; the form takes one file, in the part named file")),
  );
  parser.on("fieldsLimit", () =>
    refuse(new Invalid(`form: holds more than ${UPLOAD_FORM_LIMITS.fields} fields besides the file`)),
  );
  parser.on("partsLimit", () => refuse(new Invalid(`form: holds more than ${UPLOAD_FORM_LIMITS.parts} parts`)));
  parser.on("error", (error: Error) => refuse(malformed(error.message)));
  parser.on("drain", notify);
  parser.on("close", () => {
    state.finished = true;
    notify();
  });

  const settled = () => state.refusal !== null || state.finished;
  const nextTurn = () => new Promise<void>((resolve) => (state.wake = resolve));

  const reader = body?.getReader();
  /** The body's next chunk, null at its end. */
  const nextChunk = async (): Promise<Uint8Array | null> => {
    if (!reader) return null;
    const next = await reader.read();
    return next.done ? null : next.value;
  };
  try {
    let received = 0;
    while (!settled()) {
      let chunk: Uint8Array | null;
      try {
        chunk = await nextChunk();
      } catch {
        // the client went away mid-body: nobody waits for the answer, nothing is stored
        refuse(malformed("the body ended early"));
        break;
      }
      if (settled()) break;
      if (chunk === null) {
        parser.end();
        while (!settled()) await nextTurn();
        break;
      }
      received += chunk.byteLength;
      if (received > limits.bodyBytes) {
        tooLarge();
        break;
      }
      // busboy parses the chunk (and raises any limit) before write returns
      if (!parser.write(chunk)) {
        while (!settled() && parser.writableNeedDrain) await nextTurn();
      }
    }
  } finally {
    reader?.releaseLock();
    if (state.refusal) parser.destroy();
  }
  if (state.refusal) throw state.refusal;
  const chunks = state.fileChunks;
  return { fields, file: chunks === null ? null : Buffer.concat(chunks, state.fileBytes) };
}
