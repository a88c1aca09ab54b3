// Participant messages: templates, due scheduled messages into the outbox.
export {
  DEFAULT_TEMPLATE_LANGUAGE,
  MAX_TEMPLATE_BODY_LENGTH,
  MAX_TEMPLATE_SUBJECT_LENGTH,
  canonicalLanguage,
  checkMessageTemplateText,
  checkMessageType,
  chooseTemplate,
  deleteMessageTemplate,
  listMessageTemplates,
  readMessageTemplate,
  setMessageTemplate,
  templatesOfType,
  type MessageTemplate,
  type MessageTemplateKey,
  type MessageTemplateText,
} from "./message-templates";
export {
  TEMPLATE_PAYLOAD_PREFIXES,
  TEMPLATE_VALUE_NAMES,
  parseTemplate,
  renderTemplate,
  type TemplatePart,
} from "./template-syntax";
export {
  renderMessageTemplate,
  renderParticipantMessage,
  type ParticipantMessageToRender,
} from "./participant-message-mail";
export {
  DUE_MESSAGES_PER_TRANSACTION,
  dueScheduleRows,
  participantMessagePayload,
  queueDueParticipantMessages,
  type DueMessagesRound,
} from "./due-messages";
// case-admin's messaging (case-backend's messaging service): e-mail and SMS templates, scheduled e-mails.
export {
  checkTemplateTranslations,
  decodeTemplateDef,
  deleteEmailTemplate,
  findEmailTemplate,
  goQueryEscape,
  isStoredId,
  listGlobalEmailTemplates,
  listStudyEmailTemplates,
  presentEmailTemplate,
  readGlobalEmailTemplate,
  readStudyEmailTemplate,
  sanitizeMessageType,
  saveEmailTemplate,
  type CaseEmailTemplate,
  type CaseEmailTemplateInput,
} from "./case-email-templates";
export {
  presentSmsTemplate,
  readSmsTemplate,
  saveSmsTemplate,
  type CaseSmsTemplate,
  type CaseSmsTemplateInput,
} from "./sms-templates";
export {
  SCHEDULED_EMAIL_TEMPLATE,
  deleteScheduledEmail,
  fireDueScheduledEmails,
  listScheduledEmails,
  nextSlot,
  presentScheduledEmail,
  readScheduledEmail,
  renderScheduledEmail,
  saveScheduledEmail,
  type CaseScheduledEmail,
  type CaseScheduledEmailInput,
  type ScheduledEmailPayload,
  type ScheduledEmailsRound,
} from "./scheduled-emails";
