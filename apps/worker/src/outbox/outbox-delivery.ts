import type { Processor } from "bullmq";
import type { Logger } from "pino";
import type { Database } from "@studyflow/db";
import { UndeliverableMessage } from "@studyflow/domain/mail";
import { queueDueParticipantMessages } from "@studyflow/domain/messages";
import { queueResearcherNotifications } from "@studyflow/domain/notifications";
import {
  claimDueMessages,
  expireOverdueMessages,
  failAbandonedMessages,
  markMessageFailed,
  markMessageSent,
  prepareMail,
  recordFailedAttempt,
  releaseClaimedMessages,
  type OutboxMessage,
} from "@studyflow/domain/outbox";
import { SmtpDeliveryError, type Mailer } from "./smtp-mailer";

/**
 * Messages claimed per round. They are sent one after another, each over its own connection,
 * so a round stays within a couple of minutes even against a slow server, and a stopping worker
 * hands back at most nine untried messages.
 */
export const OUTBOX_BATCH_SIZE = 10;

/**
 * Due scheduled participant messages turned into outbox rows per round, as many as a round
 * delivers: delivery over SMTP is the slower step, so queueing more would only move a backlog of
 * due messages into the outbox, where it would count towards their expiry. A round that queued
 * this many is followed at once by the next, like a full batch.
 */
export const PARTICIPANT_MESSAGES_PER_ROUND = OUTBOX_BATCH_SIZE;

export interface OutboxDeps {
  db: Database;
  mailer: Mailer;
  logger: Logger;
  clock: () => number;
  /** @defaultValue {@link OUTBOX_BATCH_SIZE} */
  batchSize?: number;
  /** @defaultValue {@link PARTICIPANT_MESSAGES_PER_ROUND} */
  participantMessagesPerRound?: number;
  /** Asked before each message; once true, the rest of the batch is handed back untried. */
  isClosing?: () => boolean;
}

export interface OutboxRound {
  claimed: number;
  sent: number;
  /** Failed attempts that will be tried again after their backoff. */
  retrying: number;
  failed: number;
  /** Claimed but handed back untried because the dispatcher is stopping. */
  released: number;
  /** Rows found `sending` past the bound and failed (see failAbandonedMessages). */
  abandoned: number;
  /** Pending messages past their expiry, marked expired instead of sent late. */
  expired: number;
  /** Due scheduled participant messages queued into the outbox this round. */
  participantMessages: number;
  /** Due participant messages without any template: dropped, their outbox rows written failed. */
  participantMessagesWithoutTemplate: number;
  /** Researcher notifications turned into outbox rows this round. */
  notifications: number;
}

function emptyRound(): OutboxRound {
  return {
    claimed: 0,
    sent: 0,
    retrying: 0,
    failed: 0,
    released: 0,
    abandoned: 0,
    expired: 0,
    participantMessages: 0,
    participantMessagesWithoutTemplate: 0,
    notifications: 0,
  };
}

type DeliveryOutcome = "sent" | "retrying" | "failed";

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function deliver(deps: OutboxDeps, message: OutboxMessage, now: () => Date): Promise<DeliveryOutcome> {
  // Ids only: the body, the address and the reset link stay out of the logs.
  const log = deps.logger.child({ messageId: message.id, template: message.template, attempt: message.attempts });

  let templateFailure: string | undefined;
  try {
    const { templateFailure: failure, ...mail } = await prepareMail(deps.db, message, now());
    templateFailure = failure;
    if (failure !== undefined) log.warn({ reason: failure }, "instance template failed; built-in mail sent instead");
    await deps.mailer.send({ id: message.id, ...mail });
  } catch (error) {
    if (error instanceof UndeliverableMessage) {
      await markMessageFailed(deps.db, message.id, error.message);
      log.warn({ reason: error.message }, "outbox message is undeliverable");
      return "failed";
    }
    if (error instanceof SmtpDeliveryError && error.mayHaveBeenDelivered) {
      // Retrying could deliver it twice; a visible failure is the lesser harm (at most once).
      const reason = `delivery outcome unknown (connection lost after the message was sent): ${error.message}`;
      await markMessageFailed(deps.db, message.id, reason);
      log.error({ reason: error.message }, "outbox message outcome unknown; not retried");
      return "failed";
    }
    const outcome = await recordFailedAttempt(deps.db, message, errorMessage(error), now());
    log.warn({ reason: errorMessage(error), willRetry: outcome === "retry" }, "outbox message not accepted");
    return outcome === "retry" ? "retrying" : "failed";
  }

  try {
    await markMessageSent(
      deps.db,
      message.id,
      now(),
      templateFailure === undefined ? undefined : `built-in mail sent: ${templateFailure}`,
    );
  } catch (error) {
    // The row stays `sending` and the abandoned-message sweep fails it later: never sent twice.
    log.error({ reason: errorMessage(error) }, "outbox message sent, but could not be recorded as sent");
    throw error;
  }
  log.info("outbox message sent");
  return "sent";
}

/**
 * Fills the outbox from the two sources of e-mail that are not written there directly: due
 * scheduled participant messages and researcher notifications. A failure is logged and the
 * round goes on: the mails already in the outbox (password resets among them) still go out, and
 * the next round tries again, as nothing of a failed transaction was kept.
 */
async function queueMessages(deps: OutboxDeps, nowMs: number, round: OutboxRound): Promise<void> {
  try {
    const due = await queueDueParticipantMessages(
      deps.db,
      nowMs,
      deps.participantMessagesPerRound ?? PARTICIPANT_MESSAGES_PER_ROUND,
    );
    round.participantMessages = due.queued;
    round.participantMessagesWithoutTemplate = due.withoutTemplate;
    if (due.withoutTemplate > 0) {
      deps.logger.warn({ count: due.withoutTemplate }, "scheduled participant messages without a template dropped");
    }
    if (due.claimed > 0) deps.logger.info(due, "due participant messages queued");
  } catch (error) {
    deps.logger.error({ reason: errorMessage(error) }, "could not queue due participant messages");
  }
  try {
    round.notifications = (await queueResearcherNotifications(deps.db, nowMs)).delivered;
  } catch (error) {
    deps.logger.error({ reason: errorMessage(error) }, "could not queue researcher notifications");
  }
}

/**
 * One round of the outbox: queue due participant messages and researcher notifications, fail
 * rows abandoned while sending, claim a batch of due messages, and deliver them one by one.
 * Exported for tests, which drive rounds and the clock themselves.
 */
export async function runOutboxOnce(deps: OutboxDeps): Promise<OutboxRound> {
  const { clock } = deps;
  const now = () => new Date(clock());
  const isClosing = deps.isClosing ?? (() => false);
  const round = emptyRound();

  await queueMessages(deps, clock(), round);

  const abandoned = await failAbandonedMessages(deps.db, now());
  round.abandoned = abandoned.length;
  if (abandoned.length > 0) {
    deps.logger.error({ messageIds: abandoned }, "outbox messages left sending by a stopped worker marked failed");
  }
  const expired = await expireOverdueMessages(deps.db, now());
  round.expired = expired.length;
  if (expired.length > 0)
    deps.logger.warn({ messageIds: expired }, "outbox messages expired before they could be sent");
  if (isClosing()) return round;

  const batch = await claimDueMessages(deps.db, { now: now(), limit: deps.batchSize ?? OUTBOX_BATCH_SIZE });
  round.claimed = batch.length;
  let untriedFrom = 0;
  try {
    for (const message of batch) {
      if (isClosing()) break;
      untriedFrom += 1;
      round[await deliver(deps, message, now)] += 1;
    }
  } finally {
    const untried = batch.slice(untriedFrom).map((message) => message.id);
    if (untried.length > 0) {
      try {
        await releaseClaimedMessages(deps.db, untried);
        round.released = untried.length;
      } catch (error) {
        deps.logger.error({ messageIds: untried, reason: errorMessage(error) }, "could not hand back claimed messages");
      }
    }
  }
  return round;
}

/**
 * Processor of the outbox queue's scheduled rounds. A round that claimed a full batch is followed
 * at once by the next, to work off a backlog; the schedule brings the next round otherwise. Once
 * the worker closes, the message in flight is finished and the rest of its batch handed back.
 */
export function createOutboxProcessor(deps: OutboxDeps): Processor {
  const batchSize = deps.batchSize ?? OUTBOX_BATCH_SIZE;
  const perRound = deps.participantMessagesPerRound ?? PARTICIPANT_MESSAGES_PER_ROUND;
  const isClosing = deps.isClosing ?? (() => false);
  return async () => {
    const total = emptyRound();
    for (;;) {
      const round = await runOutboxOnce({ ...deps, batchSize, participantMessagesPerRound: perRound, isClosing });
      for (const key of Object.keys(total) as (keyof OutboxRound)[]) total[key] += round[key];
      const queuedFull = round.participantMessages + round.participantMessagesWithoutTemplate >= perRound;
      if ((round.claimed < batchSize && !queuedFull) || isClosing()) return total;
    }
  };
}
